package streamctl.plan

import streamctl.system.SSP

/**
 * What one reader read, in time: per SSP the newest record timestamp (epoch ms) among the records
 * of its ranges it read, control messages included (they are records on the broker like any other).
 * For the driver's seconds-behind figure ([[streamctl.system.TimeLag]]).
 */
final case class RecordTimes(newestMs: Map[SSP, Long])
