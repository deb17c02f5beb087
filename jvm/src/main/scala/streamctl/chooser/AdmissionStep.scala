package streamctl.chooser

import streamctl.plan.{BatchPlan, PlanningContext, PlanningStep}
import streamctl.system.{SSP, SystemAdmin}

/**
 * Planning step, admission: decides where each SSP ends in the batch by the chooser policy
 * ([[Admission.plan]]: bootstrap first, then priority tiers, then fair share or one event-time
 * frontier) from what each SSP may be read up to ([[streamctl.plan.BatchPlan.reachable]]) and the
 * batch's record budget, and keeps the chooser's part of the offset ([[ChooserState]]).
 *
 * Bootstrap heads are recorded the first time a bootstrap SSP is planned (at query start, or when a
 * partition or a bootstrap option appears later) as the offset it may be read up to then, and stay
 * in the offset log after that, so a restart neither re-bootstraps nor forgets where bootstrapping
 * ends. A recorded head above what can be read now (the topic was truncated or recreated) is
 * lowered, or bootstrapping could never end.
 *
 * {{{
 * val step = new AdmissionStep(options.chooser, admin)
 * val planned = step(plan, PlanningContext(budget = Some(10000)))
 * planned.ends // where each SSP ends
 * }}}
 */
final class AdmissionStep(config: ChooserConfig, admin: SystemAdmin) extends PlanningStep {
  override def apply(plan: BatchPlan, ctx: PlanningContext): BatchPlan = {
    val reachable = plan.reachable(ctx.availableNowTarget)
    val before = plan.state(ChooserState.Codec)
    /* A partition that cannot be read in this batch (held by an expansion, or new since an
     * AvailableNow run started) may be read up to its beginning only: that is no head to record, or
     * bootstrapping would pass it by for good. It counts as caught up for now (bootstrapping it
     * could not read would hold everything back, the hold's release included) and gets its head
     * once it can be read. */
    def readable(s: SSP) =
      !plan.held.contains(s) && ctx.availableNowTarget.forall(_.contains(s))
    val heads = if (config.bootstrapStreams.isEmpty) Map.empty[SSP, Long]
    else plan.ssps.iterator.filter(s => config.isBootstrap(s.stream)).map { s =>
      val now = reachable(s)
      s -> (if (readable(s)) before.bootstrapHeads.get(s).fold(now)(math.min(_, now)) else now)
    }.toMap
    val recorded = heads.map { case (s, h) =>
      s -> (if (readable(s)) Some(h) else before.bootstrapHeads.get(s))
    }.collect { case (s, Some(h)) => s -> h }
    // The last frontier is where the next one is searched from (an estimate is enough).
    val guess = before.frontier.getOrElse(-1L)
    val backlog = plan.minBegins.transform((s, b) => SspBacklog(b, reachable(s), guess))
    val timeIndex =
      if (config.timeAligned && ctx.budget.nonEmpty)
        new AdminTimeIndex(
          admin,
          backlog.collect { case (s, b) if b.available > 0 => s }.toSet
        ).offsetForTime
      else Admission.noTimeIndex
    val admitted = Admission.plan(backlog, config, heads, ctx.budget, timeIndex)
    val after = ChooserState(
      recorded,
      if (config.timeAligned) admitted.frontier.orElse(before.frontier) else None
    )
    plan.copy(ends = admitted.ends).withState(_.updated(ChooserState.Codec, after))
  }
}
