package streamctl.plan

import streamctl.system.{SSP, SkippedRange, StreamDescription}

/**
 * One step of batch planning. Every step has this shape, so the planner reads as a chain
 * ([[Planner.latestOffset]]): each takes the plan so far and returns it adjusted (where SSPs
 * begin or end, its own state in the offset). Side effects that must wait until the batch is
 * safely logged (deleting what it applied) happen in [[committed]].
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

/**
 * What a planning round knows besides the plan.
 *
 * @param described            the streams as Kafka described them in this round (partition
 *                             counts, topic IDs), when the round asked ([[streamctl.system.StreamCheck]])
 * @param availableNowTarget   the offsets current when a `Trigger.AvailableNow` run started
 * @param budget               the batch's record budget (`maxOffsetsPerTrigger` or Spark's read limit)
 * @param skippedWhileReading  ranges readers found gone while reading earlier batches
 */
final case class PlanningContext(
    described: Option[Map[String, StreamDescription]] = None,
    availableNowTarget: Option[Map[SSP, Long]] = None,
    budget: Option[Long] = None,
    skippedWhileReading: Seq[SkippedRange] = Nil)
