package streamctl
package dataloss

import org.slf4j.LoggerFactory

import streamctl.{Json, StreamctlException}
import streamctl.grouper.GroupingState
import streamctl.plan.{BatchPlan, PlanningContext, PlanningStep, SourcePosition}
import streamctl.system.{SSP, SkippedRange, SspValues, StreamDescription, SystemAdmin}

/**
 * Planning for records that are gone from the broker: nothing is lost silently. Three steps, in the
 * planner's order:
 *
 *   1. [[recreations]], first, whenever the planner asked Kafka about the streams (every
 *      `partition.check.interval`, at the first planning after a (re)start, and when a partition's
 *      end is behind the query's position): a stream whose Kafka topic ID is not the one recorded
 *      in the offset was deleted and created again. With `failOnDataLoss=true` (the default) the
 *      query fails naming the stream and both IDs; otherwise every task reading it starts over at
 *      the new topic's first offset. The IDs are recorded in the offset ([[StreamIds]]) from the
 *      query's first offset on; a checkpoint written without them gets them at its first check. A
 *      stream of option `subscribePattern` that is gone (deleted) fails the query the same way, or
 *      is dropped with a WARN (a topic created again under its name later is a new stream).
 *   2. [[gaps]], after startpoints, with `failOnDataLoss=false` only: an SSP that would begin
 *      before the oldest offset still on the broker (retention) begins there instead. With
 *      `failOnDataLoss=true` the reader fails on the missing records itself, so the default costs
 *      no extra request per batch.
 *   3. [[truncation]], once the heads are known: a head behind a task's position, in a topic that
 *      was not recreated (told by its topic ID, before this), means the partition was truncated
 *      (e.g. an unclean leader election): records the query counted on are gone, and the offsets it
 *      read will be reused. It fails, or with `failOnDataLoss=false` says so and continues from the
 *      broker's end ([[BatchPlan.end]]).
 *
 * What a batch skipped goes into its end offset ([[DataLoss]], with running totals), is logged once
 * at WARN when the batch is planned ([[planned]]), and is counted in the progress metrics
 * `recordsSkipped` and `streamsRecreated`. Records a reader finds gone between planning and reading
 * are logged by the reader and reach the totals through the readers' reports
 * (`ctx.skippedWhileReading`).
 *
 * {{{
 * val step = new DataLossChecks(admin, failOnDataLoss = false)
 * val first = step.initialize(position, check.now())
 * val plan = step.recreations(BatchPlan(previous), ctx)   // first in the chain
 * step.planned(next)
 * }}}
 */
final class DataLossChecks(admin: SystemAdmin, failOnDataLoss: Boolean) {
  import DataLossChecks._

  /** A query's first position records the IDs of its streams. */
  def initialize(first: SourcePosition, described: Map[String, StreamDescription]): SourcePosition =
    first.withState(_.updated(StreamIds.Codec, StreamIds.empty.updated(described)))

  /**
   * Starts the plan of a batch: carries the totals (adding what readers of the previous batch
   * skipped) and, when `ctx.described`, handles recreated streams and records the current IDs.
   */
  val recreations: PlanningStep = (plan: BatchPlan, ctx: PlanningContext) => {
    val loss = plan.state(DataLoss.Codec).carried.skippedWhileReading(ctx.skippedWhileReading)
    val carried = plan.withState(_.updated(DataLoss.Codec, loss))
    ctx.described.fold(carried) { now =>
      // Only a pattern's streams can be missing (named ones that do not exist fail the check).
      val deleted =
        plan.previous.ssps.iterator.map(_.stream).filterNot(now.contains).toSeq.distinct.sorted
      if (deleted.nonEmpty) {
        val what = deleted.map(s => s"'$s'").mkString(", ")
        val gone =
          if (deleted.size == 1) s"Stream $what was deleted from Kafka while the query read it"
          else s"Streams $what were deleted from Kafka while the query read them"
        if (failOnDataLoss) throw StreamctlException(
          s"$gone: any of its records the query had not read are gone (as in Spark's Kafka source). Set option " +
            "'failOnDataLoss' to false to go on with the other streams, or start the query with a new checkpoint"
        )
        log.warn(s"$gone; any of its records the query had not read are lost. Going on with the other streams, " +
          "because option 'failOnDataLoss' is false")
      }
      val recorded = plan.state(StreamIds.Codec).without(deleted)
      val recreated = recorded.recreatedIn(now)
      val withIds = carried.withState(_.updated(StreamIds.Codec, recorded.updated(now)))
      if (recreated.isEmpty) withIds
      else if (failOnDataLoss) throw StreamctlException(
        s"${recreated.map(_.describe).mkString("; ")}: the query's checkpoint holds offsets of the old topic, and the records " +
          "it had not read yet are gone. Set option 'failOnDataLoss' to false to read the new topic from its first offset, " +
          "or start the query with a new checkpoint"
      )
      else startOver(withIds, recreated, now, loss)
    }
  }

  // Gaps of the batch being planned that continue a range a reader of the previous batch found
  // gone: that reader's WARN named the whole range (one WARN per range), so they are only counted.
  private var continued: Set[SkippedRange] = Set.empty

  /**
   * With `failOnDataLoss=false`: SSPs that would begin before the broker's oldest offset begin
   * there.
   */
  val gaps: PlanningStep = (plan: BatchPlan, ctx: PlanningContext) =>
    if (failOnDataLoss || plan.ssps.isEmpty) plan
    else {
      val oldest = admin.oldestOffsets(plan.ssps)
      val skipped = DataLoss.gaps(plan.minBegins, oldest)
      continued = skipped.filter(g =>
        ctx.skippedWhileReading.exists(r => r.ssp == g.ssp && r.until == g.from)
      ).toSet
      if (skipped.isEmpty) plan
      else {
        val moved = plan.begins.foldLeft(plan) { case (p, (task, ssps)) =>
          ssps.foldLeft(p) { case (q, (ssp, begin)) =>
            oldest.get(ssp).filter(_ > begin).fold(q) { o =>
              // Where no earlier step moved it, the task reads on in the same stream.
              val goesOn = plan.previous.tasks.get(task).flatMap(_.get(ssp)).contains(begin)
              val next = q.begin(task, ssp, o)
              if (goesOn) next.copy(skippedAhead = next.skippedAhead + (task -> ssp)) else next
            }
          }
        }
        moved.withState(s => s.updated(DataLoss.Codec, s(DataLoss.Codec).skip(skipped)))
      }
    }

  /** Needs the plan's heads: fails (or warns) when a partition ends before a task's position. */
  val truncation: PlanningStep = (plan: BatchPlan, _: PlanningContext) => {
    val found = behind(plan)
    if (found.nonEmpty) {
      val what = found.toSeq.sortBy(_._1).map { case (s, o) =>
        s"stream '${s.stream}' partition ${s.partition}: checkpoint at offset $o, broker ends at ${plan.heads(s)}"
      }.mkString("; ")
      if (failOnDataLoss)
        throw StreamctlException(
          s"Kafka holds fewer records than the checkpoint has read ($what); the topic was truncated " +
            "(or recreated before streamctl recorded topic IDs). Set option 'failOnDataLoss' to false to continue from the broker's end"
        )
      log.warn(
        s"Kafka holds fewer records than the checkpoint has read ($what); continuing from the " +
          "broker's end, because option 'failOnDataLoss' is false"
      )
    }
    plan
  }

  /**
   * A batch ending at `next` was planned: says what it skips, once (a logged batch is never planned
   * again).
   */
  def planned(next: SourcePosition): Unit = {
    val loss = next.state(DataLoss.Codec)
    loss.recreated.foreach(r =>
      log.warn(s"${r.describe}; reading it again from its first offset, because option " +
        "'failOnDataLoss' is false. Records of the old topic the query had not read are lost")
    )
    loss.skipped.filterNot(continued).foreach(r => log.warn(r.describe))
    continued = Set.empty
  }

  /**
   * `recordsSkipped` (also per SSP once any were: `recordsSkippedBySsp`, by SSP name) and
   * `streamsRecreated` since the query's checkpoint began, up to the batch ending at `consumed`.
   */
  def metrics(
      consumed: SourcePosition,
      skippedWhileReading: Seq[SkippedRange]
  ): Map[String, String] = {
    val loss = consumed.state(DataLoss.Codec).skippedWhileReading(skippedWhileReading)
    Map(
      "recordsSkipped" -> loss.recordsSkipped.toString,
      "streamsRecreated" -> loss.streamsRecreated.toString
    ) ++ (if (loss.skippedBySsp.isEmpty) Map.empty
          else Map("recordsSkippedBySsp" -> Json.write(SspValues.byName(loss.skippedBySsp))))
  }

  private def startOver(
      plan: BatchPlan,
      recreated: Seq[Recreation],
      now: Map[String, StreamDescription],
      loss: DataLoss
  ): BatchPlan = {
    val streams = recreated.map(_.stream).toSet
    val ssps = plan.ssps.filter(s => streams.contains(s.stream))
    recreated.foreach { r =>
      val reads =
        ssps.iterator.filter(_.stream == r.stream).map(_.partition + 1).maxOption.getOrElse(0)
      val has = now(r.stream).partitions
      if (has < reads) throw StreamctlException(
        s"${r.describe} with $has partition(s), fewer than the $reads the query " +
          "reads; a query cannot read fewer partitions of a stream. Start it with a new checkpoint"
      )
    }
    val oldest = admin.oldestOffsets(ssps)
    val moved = plan.begins.foldLeft(plan) { case (p, (task, positions)) =>
      positions.keys.filter(ssps.contains).foldLeft(p) { (q, ssp) =>
        q.begin(
          task,
          ssp,
          oldest.getOrElse(
            ssp,
            throw StreamctlException(
              s"Kafka returned no first offset for stream '${ssp.stream}' partition ${ssp.partition}"
            )
          )
        )
      }
    }
    /* Partitions held back by an expansion wait for offsets of the old topic, which mean nothing in
     * the new one. */
    moved.withState { s =>
      val grouping = s(GroupingState.Codec)
      s.updated(
        GroupingState.Codec,
        grouping.copy(holds = grouping.holds.filter { case (held, _) =>
          !streams.contains(held.stream)
        })
      )
        .updated(DataLoss.Codec, loss.recreate(recreated))
    }
  }
}

object DataLossChecks {
  private val log = LoggerFactory.getLogger(classOf[DataLossChecks])

  /** SSPs whose head is behind a task's position in `plan`, with the furthest such position. */
  def behind(plan: BatchPlan): Map[SSP, Long] = {
    // Asked twice per batch over every task SSP, and almost always empty: nothing is built
    // unless a position is past its head (the furthest such position is the SSP's furthest).
    var found = Map.empty[SSP, Long]
    if (plan.heads.nonEmpty) plan.begins.valuesIterator.foreach(_.foreach { case (s, o) =>
      plan.heads.get(s) match {
        case Some(h) if h < o => found = found.updated(s, math.max(o, found.getOrElse(s, o)))
        case _ =>
      }
    })
    found
  }
}
