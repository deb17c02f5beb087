package streamctl.planner

import streamctl.control.SspControlStates
import streamctl.system.SSP

/**
 * Where one task's real-time reader stopped: per SSP, the next offset; the control states of its
 * intermediate SSPs.
 */
final case class ReaderEnd(positions: Map[SSP, Long], control: Option[SspControlStates.States])
