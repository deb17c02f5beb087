package streamctl.system

/**
 * The records [from, until) of one SSP that a task reads in one batch; a real-time batch's ranges
 * are open-ended (`until` = [[SspRange.OpenEnded]]): Spark ends the batch, and where the reader got
 * to is its end.
 */
final case class SspRange(ssp: SSP, from: Long, until: Long) {
  require(from <= until, s"$ssp: range start $from is after its end $until")
  def size: Long = until - from

  /** Whether the range is a real-time batch's, with no end planned. */
  def openEnded: Boolean = until == SspRange.OpenEnded
}

object SspRange {

  /** The end of a real-time batch's ranges: none. */
  val OpenEnded: Long = Long.MaxValue
}
