package streamctl.system

/** The records [from, until) of one SSP that a task reads in one batch. */
final case class SspRange(ssp: SSP, from: Long, until: Long) {
  require(from <= until, s"$ssp: range start $from is after its end $until")
  def size: Long = until - from
}
