package streamctl.chooser

import streamctl.StreamctlException
import streamctl.system.SSP

/**
 * Shares one batch's record budget between SSPs (the driver side of the chooser):
 *   1. Bootstrap first: while any bootstrap SSP's start is behind its start-time head, only
 *      bootstrap SSPs that are behind are read, each at most up to that head; every other SSP gets
 *      nothing. Leftover budget is not passed on, so no batch mixes bootstrap reading with other
 *      streams (their tasks run in parallel, so only batch boundaries order them).
 *   2. Then priority tiers, highest first: a tier takes what it can of the budget and passes the
 *      rest down.
 *   3. Inside a tier, fair share by [[WaterFilling]], or with `chooser=time-aligned` one common
 *      event-time frontier by [[TimeFrontier]] (bootstrap reading stays fair share: it must finish
 *      whatever the time).
 * Without a budget every SSP is read to its head, except while bootstrapping. Deterministic: SSPs
 * are visited in SSP order, so equal inputs plan equal batches.
 *
 * {{{
 * val plan = Admission.plan(
 *   backlog = Map(cur0 -> SspBacklog(0, 50), tx0 -> SspBacklog(0, 1000)),
 *   config = ChooserConfig.parse(Map("stream.currency.bootstrap" -> "true"), Seq("currency", "tx")),
 *   bootstrapHeads = Map(cur0 -> 50L),
 *   budget = Some(100))
 * plan.ends   // Map(cur0 -> 50, tx0 -> 0): bootstrap first
 * }}}
 */
object Admission {

  /** For plans that never align on time. */
  val noTimeIndex: (SSP, Long) => Long = (ssp, _) =>
    throw StreamctlException(
      s"Time-aligned admission for ${ssp.key} needs an offsets-for-times function"
    )

  /**
   * @param bootstrapHeads
   *   start-time head of every bootstrap SSP (recorded at query start)
   * @param budget
   *   `maxOffsetsPerTrigger` or the Spark read limit; None = all available
   * @param offsetForTime
   *   first offset of an SSP whose timestamp is >= t (-1 when none); used only for
   *   `chooser=time-aligned` with a budget
   */
  def plan(
      backlog: Map[SSP, SspBacklog],
      config: ChooserConfig,
      bootstrapHeads: Map[SSP, Long],
      budget: Option[Long],
      offsetForTime: (SSP, Long) => Long = noTimeIndex
  ): AdmissionPlan = {
    budget.foreach(b => if (b <= 0) throw StreamctlException(s"Record budget must be > 0, got $b"))
    val ssps = backlog.keys.toIndexedSeq.sorted
    def none = ssps.map(s => s -> backlog(s).start).toMap

    val behind = if (config.bootstrapStreams.isEmpty) IndexedSeq.empty[SSP]
    else ssps.filter(s => config.isBootstrap(s.stream)).filter { s =>
      val head = bootstrapHeads.getOrElse(
        s,
        throw StreamctlException(
          s"Bootstrap SSP ${s.key} has no start-time head offset; the planner must record one"
        )
      )
      backlog(s).start < head
    }
    if (behind.nonEmpty) {
      val capped = behind.map(s =>
        s -> backlog(s).copy(head = math.min(backlog(s).head, bootstrapHeads(s)))
      ).toMap
      val (ends, _) = byTiers(behind, capped, config, budget, timeAligned = false, offsetForTime)
      return AdmissionPlan(none ++ ends, bootstrapping = true, frontier = None)
    }

    // byTiers gives every SSP its end.
    val (ends, frontier) = byTiers(ssps, backlog, config, budget, config.timeAligned, offsetForTime)
    AdmissionPlan(ends, bootstrapping = false, frontier)
  }

  private def byTiers(
      ssps: IndexedSeq[SSP],
      backlog: Map[SSP, SspBacklog],
      config: ChooserConfig,
      budget: Option[Long],
      timeAligned: Boolean,
      offsetForTime: (SSP, Long) => Long
  ): (Map[SSP, Long], Option[Long]) = {
    if (budget.isEmpty) {
      val ends = ssps.map { s =>
        val b = backlog(s) // looked up once per SSP, as below
        s -> math.max(b.start, b.head)
      }.toMap
      return (ends, None)
    }
    var remaining = budget.get
    var frontier: Option[Long] = None
    // Without priorities (the usual case) one tier: no grouping of thousands of SSPs by stream.
    val tiers =
      if (config.priorities.isEmpty) Seq(ssps)
      else ssps.groupBy(s => config.priorityOf(s.stream)).toSeq.sortBy(_._1)(
        Ordering[Int].reverse
      ).map(_._2)
    val ends = Map.newBuilder[SSP, Long]
    tiers.foreach { tier =>
      val backlogs = tier.map(backlog).toArray // looked up once per SSP
      val starts = backlogs.map(_.start)
      val tierEnds =
        if (remaining == 0) starts
        else if (timeAligned) {
          val r = TimeFrontier.plan(
            tier,
            starts,
            backlogs.map(_.head),
            backlogs.map(_.startTimestamp),
            remaining,
            offsetForTime
          )
          // With tiers the highest tier's frontier is the one worth reporting: it moved first.
          if (frontier.isEmpty) frontier = r.frontier
          r.ends
        } else {
          // The starts move every batch: a budget smaller than the tier reaches each SSP in turn.
          val granted =
            WaterFilling.share(backlogs.map(_.available), remaining, rotation = starts.sum)
          Array.tabulate(tier.length)(i => starts(i) + granted(i))
        }
      var i = 0
      while (i < tier.length) {
        remaining -= tierEnds(i) - starts(i)
        ends += tier(i) -> tierEnds(i)
        i += 1
      }
    }
    (ends.result(), frontier)
  }
}
