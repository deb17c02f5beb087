package streamctl.system

/**
 * The one rule for how far behind in time a reader of an SSP is, for the metrics a batch reports
 * and for `streamctl describe`: the time of the newest record on the broker minus the time of the
 * newest record the reader processed, in whole seconds; 0 when no record is left to read, whatever
 * the times say (a caught-up reader is never behind). Unknown (None) when records are left and
 * either time is: the reader processed none of the SSP's records yet, or the broker keeps no
 * timestamps. A newest record older than the last processed one (timestamps out of order) counts as
 * 0.
 *
 * {{{
 * TimeLag.secondsBehind(recordsBehind = 0, newestMs = None, processedMs = None)           // Some(0)
 * TimeLag.secondsBehind(recordsBehind = 5, newestMs = Some(90000), processedMs = Some(30000)) // Some(60)
 * }}}
 */
object TimeLag {
  def secondsBehind(
      recordsBehind: Long,
      newestMs: Option[Long],
      processedMs: Option[Long]
  ): Option[Long] =
    if (recordsBehind <= 0) Some(0L)
    else for (n <- newestMs; p <- processedMs) yield math.max(0L, n - p) / 1000L
}
