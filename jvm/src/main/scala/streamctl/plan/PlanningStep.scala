package streamctl.plan

/**
 * One step of batch planning. Every step has this shape, so the planner reads as a chain
 * (`planner.Planner.latestOffset`): each takes the plan so far and returns it adjusted (where SSPs
 * begin or end, its own state in the offset). Side effects that must wait until the batch is safely
 * logged (deleting what it applied) happen in [[committed]].
 *
 * {{{
 * val plan = Seq(grouping, startpoints, admission).foldLeft(BatchPlan(previous))((p, step) => step(p, ctx))
 * }}}
 */
trait PlanningStep {
  def apply(plan: BatchPlan, ctx: PlanningContext): BatchPlan

  /** Spark committed the batch that ends at `end` (and logged the one after it). */
  def committed(end: SourcePosition): Unit = ()
}
