package streamctl.system

/**
 * The one rule for how far behind a reader of an SSP is, for the metrics a batch reports, its
 * progress history and `streamctl describe`. In records: the head (the next offset the broker will
 * give) minus the reader's position (the next offset it reads), never negative, and unknown (left
 * out, never 0) where the head is. In time: the time of the newest record on the broker minus the
 * time of the newest record the reader processed, in whole seconds; 0 when no record is left to
 * read, whatever the times say (a caught-up reader is never behind). Unknown (None) when records
 * are left and either time is: the reader processed none of the SSP's records yet, or the broker
 * keeps no timestamps. A newest record older than the last processed one (timestamps out of order)
 * counts as 0.
 *
 * {{{
 * TimeLag.secondsBehind(recordsBehind = 0, newestMs = None, processedMs = None)           // Some(0)
 * TimeLag.secondsBehind(recordsBehind = 5, newestMs = Some(90000), processedMs = Some(30000)) // Some(60)
 * TimeLag.recordsBehind(heads = Map(a -> 8L), positions = Map(a -> 5L, b -> 2L))              // Map(a -> 3)
 * }}}
 */
object TimeLag {
  def recordsBehind(head: Long, position: Long): Long = math.max(0L, head - position)

  def recordsBehind(heads: Map[SSP, Long], positions: Map[SSP, Long]): Map[SSP, Long] =
    positions.collect {
      case (ssp, o) if heads.contains(ssp) => ssp -> recordsBehind(heads(ssp), o)
    }

  def secondsBehind(
      recordsBehind: Long,
      newestMs: Option[Long],
      processedMs: Option[Long]
  ): Option[Long] =
    if (recordsBehind <= 0) Some(0L)
    else for (n <- newestMs; p <- processedMs) yield math.max(0L, n - p) / 1000L
}
