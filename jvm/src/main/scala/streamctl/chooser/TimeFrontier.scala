package streamctl.chooser

import streamctl.system.SSP

/**
 * Time-aligned admission: advances one event-time frontier T over a set of SSPs so that no stream
 * runs ahead of the others, within a record budget.
 *
 * For a time T, SSP s is read up to `offsetForTime(s, T)`, the first offset whose timestamp is >= T
 * (Kafka's offsets-for-times), clamped to [start, head]; -1 or anything past the head means "no
 * such record": read to the head. The admitted count f(T) grows with T. The frontier is the largest
 * T with f(T) <= budget, found by galloping up from the earliest known start timestamp and then
 * bisecting (about 2·log2(advance in ms) probes; each probe asks every SSP with a backlog for the
 * same T, so a caching adapter turns a probe into one broker request — see [[AdminTimeIndex]]). The
 * budget left over is shared by water-filling among the records stamped exactly T, so a batch
 * always makes progress, even when more than a budget's worth of records share one timestamp.
 *
 * Records without a timestamp (-1) are older than every time >= 0 for offsets-for-times, so they
 * are admitted first; `offsetForTime` is never asked about a negative time (Kafka reads -1/-2 as
 * "latest"/"earliest").
 *
 * {{{
 * val (ends, frontier) = TimeFrontier.plan(ssps, starts, heads, startTimestamps, budget = 1000,
 *                                          (ssp, t) => admin.offsetsForTimestamps(Map(ssp -> t))(ssp))
 * }}}
 */
object TimeFrontier {
  final case class Result(ends: Array[Long], frontier: Option[Long], probes: Int)

  /**
   * Largest time probed; beyond it everything counts as admitted (no Kafka record is that late).
   */
  private val MaxTime = Long.MaxValue / 4

  /**
   * @param startTimestamps
   *   timestamp of the record at each start offset, -1 when unknown; only used to start the search
   *   close to the answer
   */
  def plan(
      ssps: IndexedSeq[SSP],
      starts: Array[Long],
      heads: Array[Long],
      startTimestamps: Array[Long],
      budget: Long,
      offsetForTime: (SSP, Long) => Long
  ): Result = {
    val n = ssps.length
    val total = (0 until n).map(i => math.max(0L, heads(i) - starts(i))).sum
    if (total <= budget)
      return Result(Array.tabulate(n)(i => math.max(starts(i), heads(i))), None, 0)

    var probes = 0
    def endsAt(t: Long): Array[Long] = {
      if (t < 0) return starts.clone()
      if (t > MaxTime) return Array.tabulate(n)(i => math.max(starts(i), heads(i)))
      probes += 1
      Array.tabulate(n) { i =>
        if (heads(i) <= starts(i)) starts(i)
        else {
          val o = offsetForTime(ssps(i), t)
          if (o < 0 || o > heads(i)) heads(i) else math.max(o, starts(i))
        }
      }
    }
    def count(ends: Array[Long]): Long = (0 until n).map(i => ends(i) - starts(i)).sum

    /* Invariant: f(lo) <= budget < f(hi). lo = -1 stands for "nothing", hi = MaxTime + 1 for
     * "everything". */
    var lo = -1L; var loEnds = starts.clone()
    var hi = MaxTime + 1; var hiEnds: Array[Long] = null
    def probe(t: Long): Boolean = {
      val e = endsAt(t)
      if (count(e) <= budget) { lo = t; loEnds = e; true }
      else { hi = t; hiEnds = e; false }
    }

    val known =
      (0 until n).filter(i => heads(i) > starts(i) && startTimestamps(i) >= 0).map(startTimestamps)
    if (known.nonEmpty && !probe(math.min(known.min, MaxTime))) {
      // Records older than the guess (SSPs whose start time is unknown) overflow it: gallop down.
      var step = 1L
      while (lo < 0 && hi > 0) {
        probe(math.max(0L, hi - step))
        step = if (step > MaxTime / 2) MaxTime else step * 2
      }
    }
    if (hi > MaxTime) {
      var step = 1L
      var fits = true
      while (fits && hi > MaxTime) {
        val t = if (lo < 0) 0L else math.min(MaxTime, lo + step)
        fits = probe(t) && t < MaxTime
        step = if (step > MaxTime / 2) MaxTime else step * 2
      }
    }
    while (hi - lo > 1) probe(lo + (hi - lo) / 2)

    if (hiEnds == null) hiEnds = endsAt(hi)
    // Records stamped exactly `lo` (between the two ends) share what is left of the budget.
    val leftover = budget - count(loEnds)
    val extra = WaterFilling.share(Array.tabulate(n)(i => hiEnds(i) - loEnds(i)), leftover)
    Result(Array.tabulate(n)(i => loEnds(i) + extra(i)), if (lo >= 0) Some(lo) else None, probes)
  }
}
