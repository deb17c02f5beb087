package streamctl.spark

import streamctl.chooser.{AdminTimeIndex, Admission, ChooserConfig, SspBacklog}
import streamctl.system.{SSP, SystemAdmin}

/**
 * Planning step 4, admission: decides where each SSP ends in the batch by the chooser
 * policy ([[Admission.plan]]: bootstrap first, then priority tiers, then fair share or one
 * event-time frontier), and keeps the chooser's part of the offset ([[ChooserState]]).
 *
 * Bootstrap heads are recorded the first time a bootstrap SSP is planned (at query start,
 * or when a partition or a bootstrap option appears later) as the offset it may be read up
 * to then, and stay in the offset log after that, so a restart neither re-bootstraps nor
 * forgets where bootstrapping ends. A recorded head above what can be read now (the topic
 * was truncated or recreated) is lowered, or bootstrapping could never end.
 *
 * {{{
 * val step = new AdmissionStep(ChooserOptions.validated(options), admin)
 * val (planned, ends) = step(plan, reachable = heads, budget = Some(10000))
 * }}}
 */
final class AdmissionStep(config: ChooserConfig, admin: SystemAdmin) {
  /**
   * @param reachable per SSP of the plan, the offset it may be read up to in this batch
   *                  (the broker's head, capped by the Trigger.AvailableNow target)
   * @param budget    the batch's record budget (`max.records.per.batch` / the read limit)
   * @return the plan with the updated chooser state, and the end offset of every SSP
   */
  def apply(plan: BatchPlan, reachable: Map[SSP, Long], budget: Option[Long]): (BatchPlan, Map[SSP, Long]) = {
    val before = ChooserState.of(plan.state)
    val heads = plan.ssps.iterator.filter(s => config.isBootstrap(s.stream)).map { s =>
      val now = reachable(s)
      s -> before.bootstrapHeads.get(s).fold(now)(math.min(_, now))
    }.toMap
    // The last frontier is where the next one is searched from (an estimate is enough).
    val guess = before.frontier.getOrElse(-1L)
    val backlog = plan.minBegins.map { case (s, b) => s -> SspBacklog(b, reachable(s), guess) }
    val timeIndex =
      if (config.timeAligned && budget.nonEmpty)
        new AdminTimeIndex(admin, backlog.collect { case (s, b) if b.available > 0 => s }.toSet).offsetForTime
      else Admission.noTimeIndex
    val admitted = Admission.plan(backlog, config, heads, budget, timeIndex)

    val after = ChooserState(heads, if (config.timeAligned) admitted.frontier.orElse(before.frontier) else None)
    val planned =
      if (after.isEmpty) plan.copy(state = plan.state - ChooserState.Key)
      else plan.withState(ChooserState.Key, after.toJson)
    (planned, admitted.ends)
  }
}
