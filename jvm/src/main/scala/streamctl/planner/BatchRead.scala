package streamctl.planner

import streamctl.StreamctlException
import streamctl.control.{SspControlStates, TaskControl, WatermarkSummary}
import streamctl.grouper.{Grouping, TaskMapping}
import streamctl.system.{SspRange, StreamCheck, SystemAdmin}

/**
 * Plans `spark.read.format("streamctl")`: one read of fixed offset ranges, from the starting bound
 * (`startingOffsets*`, earliest by default, as in Spark) to the ending one (`endingOffsets*`,
 * latest by default), grouped into tasks by the query's grouper like a streaming query's first
 * batch. Nothing is kept: no metadata store, no startpoints (they are neither applied nor deleted),
 * no control bookkeeping (an intermediate stream's framing is stripped and its control messages
 * skipped).
 *
 * {{{
 * val reads = BatchRead.plan(options, admin)   // one TaskRead per task with records in range
 * }}}
 */
object BatchRead {
  def plan(options: SourceOptions, admin: SystemAdmin): Seq[TaskRead] = {
    val described = new StreamCheck(admin, options.subscription, Long.MaxValue).describe()
    val grouped =
      Grouping(options.grouping, None, described.map { case (s, d) => s -> d.partitions })
    val mapping = options.subscription.only.fold(grouped)(keep =>
      TaskMapping(
        grouped.initialPartitionCounts,
        grouped.taskSsps.map { case (t, ssps) => t -> ssps.filter(keep) }.filter(_._2.nonEmpty)
      )
    )
    val ssps = mapping.ssps
    val starts =
      options.starting(batch = true).resolve(admin, ssps, options.noTimestampMatchIsLatest)
    val ends = options.ending.resolve(admin, ssps, noMatchIsLatest = true)
    ssps.toSeq.sorted.find(s => ends(s) < starts(s)).foreach { s =>
      throw StreamctlException(
        s"Stream '${s.stream}' partition ${s.partition} would end at offset ${ends(s)}, before it " +
          s"starts at ${starts(s)}: check options 'startingOffsets*' and 'endingOffsets*'"
      )
    }
    val bootstrap = options.chooser.bootstrapStreams
    // Records a pooled consumer kept from an earlier read serve only the same topic incarnation.
    val ids = described.collect { case (s, d) if d.id.isDefined => s -> d.id.get }
    mapping.taskSsps.toSeq.sortBy(_._1).flatMap { case (task, taskSsps) =>
      val ranges =
        taskSsps.toSeq.sorted.map(s => SspRange(s, starts(s), ends(s))).filter(_.size > 0)
      if (ranges.isEmpty) None
      else {
        val intermediate = ranges.exists(r => options.intermediateStreams.contains(r.ssp.stream))
        Some(TaskRead(
          task,
          ranges,
          Array.empty,
          bootstrapHeads = ranges.collect {
            case r if bootstrap.contains(r.ssp.stream) => r.ssp -> r.until
          }.toMap,
          control = if (intermediate) Some(NoControl) else None,
          streamIds = TaskRead.streamIdsOf(ids, ranges)
        ))
      }
    }
  }

  /** An intermediate stream read without bookkeeping: its control messages are read and dropped. */
  private val NoControl =
    TaskControl(-1L, SspControlStates.write(Map.empty), WatermarkSummary.empty)
}
