package streamctl.spark

import com.fasterxml.jackson.databind.JsonNode
import org.slf4j.LoggerFactory

import streamctl.StreamctlException
import streamctl.system.{DataLoss, Recreation, SkippedRange, StreamDescription, StreamIds, SystemAdmin}

/**
 * Planning for records that are gone from the broker: nothing is lost silently. Two steps,
 * in the planner's order:
 *
 *  1. [[recreations]], before grouping, whenever the planner asked Kafka about the streams
 *     (every `partition.check.interval`, at the first planning after a (re)start, and when a
 *     partition's end is behind the query's position): a stream whose Kafka topic ID is not
 *     the one recorded in the offset was deleted and created again. With
 *     `fail.on.data.loss=true` (the default) the query fails naming the stream and both IDs;
 *     otherwise every task reading it starts over at the new topic's first offset. The IDs
 *     are recorded in the offset ([[StreamIds]]) from the query's first offset on; a
 *     checkpoint written without them gets them at its first check.
 *  2. [[gaps]], after startpoints, with `fail.on.data.loss=false` only: an SSP that would
 *     begin before the oldest offset still on the broker (retention) begins there instead.
 *     With `fail.on.data.loss=true` the reader fails on the missing records itself, so the
 *     default costs no extra request per batch.
 *
 * What a batch skipped goes into its end offset ([[DataLoss]], with running totals), is
 * logged once at WARN when the batch is planned ([[planned]]), and is counted in the
 * progress metrics `recordsSkipped` and `streamsRecreated`. Records a reader finds gone
 * between planning and reading are logged by the reader and reach the totals through
 * [[TaskRuns]].
 *
 * {{{
 * val step = new DataLossStep(admin, failOnDataLoss = false)
 * val first = step.initialize(offset, check.now())
 * val plan = step.gaps(startpoints(grouping.plan(step.recreations(BatchPlan(previous), check.ifDue(), runs.skipped), ...)))
 * step.planned(next)
 * }}}
 */
final class DataLossStep(admin: SystemAdmin, failOnDataLoss: Boolean) {
  import DataLossStep._

  /** A query's first offset records the IDs of its streams. */
  def initialize(first: SourceOffset, described: Map[String, StreamDescription]): SourceOffset = {
    val ids = StreamIds.empty.updated(described)
    if (ids.ids.isEmpty) first else first.withState(StreamIds.StateKey, ids.toJson)
  }

  /**
   * Starts the plan of a batch: carries the totals (adding what readers of the previous batch
   * skipped) and, when `described`, handles recreated streams and records the current IDs.
   */
  def recreations(plan: BatchPlan, described: Option[Map[String, StreamDescription]],
                  skippedWhileReading: Seq[SkippedRange]): BatchPlan = {
    val loss = lossOf(plan.state).carried.skippedWhileReading(skippedWhileReading)
    val carried = withLoss(plan, loss)
    described.fold(carried) { now =>
      val recorded = idsOf(plan.state)
      val recreated = recorded.recreatedIn(now)
      val withIds = carried.withState(StreamIds.StateKey, recorded.updated(now).toJson)
      if (recreated.isEmpty) withIds
      else if (failOnDataLoss) throw StreamctlException(
        s"${recreated.map(_.describe).mkString("; ")}: the query's checkpoint holds offsets of the old topic, and the records " +
          "it had not read yet are gone. Set option 'fail.on.data.loss' to false to read the new topic from its first offset, " +
          "or start the query with a new checkpoint")
      else startOver(withIds, recreated, now, loss)
    }
  }

  /** With `fail.on.data.loss=false`: SSPs that would begin before the broker's oldest offset begin there. */
  def gaps(plan: BatchPlan): BatchPlan =
    if (failOnDataLoss || plan.ssps.isEmpty) plan
    else {
      val oldest = admin.oldestOffsets(plan.ssps)
      val skipped = DataLoss.gaps(plan.minBegins, oldest)
      if (skipped.isEmpty) plan
      else {
        val moved = plan.begins.foldLeft(plan) { case (p, (task, ssps)) =>
          ssps.foldLeft(p) { case (q, (ssp, begin)) => oldest.get(ssp).filter(_ > begin).fold(q)(q.begin(task, ssp, _)) }
        }
        withLoss(moved, lossOf(plan.state).skip(skipped))
      }
    }

  /** A batch ending at `next` was planned: says what it skips, once (a logged batch is never planned again). */
  def planned(next: SourceOffset): Unit = {
    val loss = lossOf(next.state)
    loss.recreated.foreach(r => log.warn(s"${r.describe}; reading it again from its first offset, because option " +
      "'fail.on.data.loss' is false. Records of the old topic the query had not read are lost"))
    loss.skipped.foreach(r => log.warn(r.describe))
  }

  /** `recordsSkipped` and `streamsRecreated` since the query's checkpoint began, up to the batch ending at `consumed`. */
  def metrics(consumed: SourceOffset, skippedWhileReading: Seq[SkippedRange]): Map[String, String] = {
    val loss = lossOf(consumed.state).skippedWhileReading(skippedWhileReading)
    Map("recordsSkipped" -> loss.recordsSkipped.toString, "streamsRecreated" -> loss.streamsRecreated.toString)
  }

  private def startOver(plan: BatchPlan, recreated: Seq[Recreation], now: Map[String, StreamDescription],
                        loss: DataLoss): BatchPlan = {
    val streams = recreated.map(_.stream).toSet
    val ssps = plan.ssps.filter(s => streams.contains(s.stream))
    recreated.foreach { r =>
      val reads = ssps.iterator.filter(_.stream == r.stream).map(_.partition + 1).maxOption.getOrElse(0)
      val has = now(r.stream).partitions
      if (has < reads) throw StreamctlException(s"${r.describe} with $has partition(s), fewer than the $reads the query " +
        "reads; a query cannot read fewer partitions of a stream. Start it with a new checkpoint")
    }
    val oldest = admin.oldestOffsets(ssps)
    val moved = plan.begins.foldLeft(plan) { case (p, (task, positions)) =>
      positions.keys.filter(ssps.contains).foldLeft(p) { (q, ssp) =>
        q.begin(task, ssp, oldest.getOrElse(ssp, throw StreamctlException(
          s"Kafka returned no first offset for stream '${ssp.stream}' partition ${ssp.partition}")))
      }
    }
    // Partitions held back by an expansion wait for offsets of the old topic, which mean nothing in the new one.
    val unheld = GroupingState.of(moved.state).fold(moved) { g =>
      moved.withState(GroupingState.Key, g.copy(holds = g.holds.filter { case (held, _) => !streams.contains(held.stream) }).toJson)
    }
    withLoss(unheld, loss.recreate(recreated))
  }
}

object DataLossStep {
  private val log = LoggerFactory.getLogger(classOf[DataLossStep])

  private def what(key: String) = s"state '$key' of the streamctl offset in the query checkpoint"

  def lossOf(state: Map[String, JsonNode]): DataLoss =
    state.get(DataLoss.StateKey).fold(DataLoss.empty)(DataLoss.parse(_, what(DataLoss.StateKey)))

  def idsOf(state: Map[String, JsonNode]): StreamIds =
    state.get(StreamIds.StateKey).fold(StreamIds.empty)(StreamIds.parse(_, what(StreamIds.StateKey)))

  /** A query that never lost anything carries no loss state, so its offsets are as before this step existed. */
  private def withLoss(plan: BatchPlan, loss: DataLoss): BatchPlan =
    if (loss.isEmpty) plan.copy(state = plan.state - DataLoss.StateKey) else plan.withState(DataLoss.StateKey, loss.toJson)
}
