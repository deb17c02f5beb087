package streamctl.planner

import streamctl.plan.{BatchPlan, SourcePosition}

/**
 * A real-time batch as planned: where it begins (`plan`, the beginnings and the state its end
 * starts from) and what each task reads (open-ended ranges; none after `end_of_stream`).
 */
final case class RealTimeBatch(previous: SourcePosition, plan: BatchPlan, reads: Seq[TaskRead])
