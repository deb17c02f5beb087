package streamctl.plan

import streamctl.system.{SSP, SkippedRange, StreamDescription}

/**
 * What a planning round knows besides the plan.
 *
 * @param described
 *   the streams as Kafka described them in this round (partition counts, topic IDs), when the round
 *   asked ([[streamctl.system.StreamCheck]])
 * @param availableNowTarget
 *   the offsets current when a `Trigger.AvailableNow` run started
 * @param budget
 *   the batch's record budget (`maxOffsetsPerTrigger` or Spark's read limit)
 * @param skippedWhileReading
 *   ranges readers found gone while reading earlier batches
 */
final case class PlanningContext(
    described: Option[Map[String, StreamDescription]] = None,
    availableNowTarget: Option[Map[SSP, Long]] = None,
    budget: Option[Long] = None,
    skippedWhileReading: Seq[SkippedRange] = Nil
)
