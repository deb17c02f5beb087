package streamctl.grouper

import streamctl.StreamctlException
import streamctl.system.{SSP, TaskName}

/**
 * Computes the SSP -> task mapping in force, from the previous one and the partition counts the
 * broker reports now. The planner calls it at query start and whenever it checks for partition
 * changes, then records the result (metadata store and Offset).
 *
 * Rules, in the order applied:
 *   1. A partition count may not shrink (error naming the stream and both counts).
 *   1. Every SSP of the previous mapping stays on its task.
 *   1. A new partition of a known, non-broadcast stream joins the task of the partition the
 *      expansion algorithm names (default: `p % initialCount`); the algorithm may refuse the new
 *      count. So expansion never creates a task.
 *   1. Everything else (first run, streams added to the query, a stream that stopped being
 *      broadcast) is grouped by the configured grouper; with no previous mapping the result is
 *      exactly the grouper's plain grouping. Only these can create tasks.
 *   1. A broadcast stream's partitions go to every task; it may grow by any amount, since no key
 *      can change task when every task reads every partition.
 *
 * Streams no longer in `currentPartitionCounts` are dropped from the mapping (and with them tasks
 * left without SSPs); re-adding such a stream later counts as a new stream.
 *
 * {{{
 * val config = GrouperConfig.parse(Map.empty, Seq("orders"))
 * val first = Grouping(config, None, Map("orders" -> 2))            // Partition 0, Partition 1
 * val grown = Grouping(config, Some(first), Map("orders" -> 4))     // orders-2 -> Partition 0, orders-3 -> Partition 1
 * grown.addedSince(Some(first))                                     // Set(orders-2, orders-3): read from their beginning
 * }}}
 */
object Grouping {

  /** Every stream is in this system; the mapping's SSP keys carry it. */
  val SystemName: String = SSP.KafkaSystem

  def apply(
      config: GrouperConfig,
      previous: Option[TaskMapping],
      currentPartitionCounts: Map[String, Int]
  ): TaskMapping =
    compute(config, previous, currentPartitionCounts, shortcut = true)

  /**
   * `shortcut = false` forces the full computation, so tests can prove the shortcut changes
   * nothing.
   */
  private[grouper] def compute(
      config: GrouperConfig,
      previous: Option[TaskMapping],
      currentPartitionCounts: Map[String, Int],
      shortcut: Boolean
  ): TaskMapping = {
    for (s <- config.streams if !currentPartitionCounts.contains(s))
      throw StreamctlException(s"No partition count for input stream '$s'")
    for ((s, n) <- currentPartitionCounts if n <= 0)
      throw StreamctlException(s"Stream '$s' has $n partitions; a stream needs at least one")

    previous match {
      case Some(prev) if shortcut && unchanged(config, prev, currentPartitionCounts) => prev
      case _ => regroup(config, previous.getOrElse(TaskMapping.empty), currentPartitionCounts)
    }
  }

  /**
   * True when `prev` is exactly what regrouping would return: same streams and counts, every
   * non-broadcast SSP in one task, every broadcast SSP in all. Then every SSP is pinned and the
   * grouper has nothing to decide. This is the common case (a periodic check finding no change),
   * and answering it with lookups only keeps batch planning cheap.
   */
  private def unchanged(
      config: GrouperConfig,
      prev: TaskMapping,
      counts: Map[String, Int]
  ): Boolean = {
    val taskCount = prev.taskSsps.size
    prev.initialPartitionCounts.keySet == counts.keySet &&
    !counts.keysIterator.forall(config.broadcastStreams.contains) &&
    prev.taskSsps.valuesIterator.forall(_.nonEmpty) &&
    prev.sspTasks.size == counts.valuesIterator.sum &&
    counts.forall { case (stream, count) =>
      val want = if (config.broadcastStreams.contains(stream)) taskCount else 1
      prev.partitionCount(stream) == count &&
      (0 until count).forall(p => prev.tasksOf(SSP(SystemName, stream, p)).size == want)
    }
  }

  private def regroup(
      config: GrouperConfig,
      prev: TaskMapping,
      currentPartitionCounts: Map[String, Int]
  ): TaskMapping = {
    val initialCounts = Map.newBuilder[String, Int]
    val pinned = Map.newBuilder[SSP, TaskName]
    val toGroup = Set.newBuilder[SSP]
    val broadcast = Set.newBuilder[SSP]

    for ((stream, count) <- currentPartitionCounts.toSeq.sortBy(_._1)) {
      val prevCount = prev.partitionCount(stream)
      val known = prevCount > 0 && prev.initialPartitionCounts.contains(stream)
      if (known && count < prevCount)
        throw StreamctlException(
          s"Stream '$stream' shrank from $prevCount to $count partitions. Kafka cannot remove partitions, so the " +
            "stream was probably deleted and re-created; records of the removed partitions and the keys they held " +
            "would be lost. Recreate it with at least the old count, or start a new query (new checkpoint)."
        )
      /* A stream that was broadcast and no longer is gets grouped afresh (its partitions had no
       * single task to keep), so its keys' tasks follow from the count it has now: a broadcast
       * stream may have grown by any amount since its initial count. */
      val afresh = known && !config.broadcastStreams.contains(stream) &&
        (0 until prevCount).exists(p => prev.tasksOf(SSP(SystemName, stream, p)).size > 1)
      val initial = if (known && !afresh) prev.initialPartitionCounts(stream) else count
      initialCounts += stream -> initial

      if (config.broadcastStreams.contains(stream)) {
        for (p <- 0 until count) broadcast += SSP(SystemName, stream, p)
      } else {
        for (p <- 0 until count) {
          val ssp = SSP(SystemName, stream, p)
          toGroup += ssp
          if (p < prevCount) singleTask(prev, ssp).foreach(t => pinned += ssp -> t)
        }
        if (known && !afresh && count > prevCount) {
          config.expansion.check(stream, initial, prevCount, count)
          for (p <- prevCount until count) {
            val origin = originOf(config, stream, p, initial, prevCount, count)
            // An origin without a single task (the stream was broadcast before) leaves the new
            // partition to the grouper, like the rest of that stream.
            singleTask(prev, SSP(SystemName, stream, origin)).foreach(t =>
              pinned += SSP(SystemName, stream, p) -> t
            )
          }
        }
      }
    }

    val fixed = pinned.result()
    val ssps = toGroup.result()
    val groups = config.grouper.group(fixed, ssps)
    if (GrouperOutputCheck.needed(config.grouper))
      GrouperOutputCheck(config.grouperName, fixed, ssps, groups)

    val nonEmpty = groups.filter(_._2.nonEmpty)
    val broadcastSsps = broadcast.result()
    val taskSsps =
      if (broadcastSsps.isEmpty) nonEmpty
      else if (nonEmpty.isEmpty)
        throw StreamctlException(
          s"Every input stream is broadcast (${config.broadcastStreams.toSeq.sorted.mkString(", ")}); at least one " +
            "stream must be read by partition so that there are tasks to broadcast to"
        )
      else nonEmpty.map { case (t, group) => t -> (group ++ broadcastSsps) }
    TaskMapping(initialCounts.result(), taskSsps)
  }

  // Only an SSP in exactly one task is pinned: several tasks means its stream was broadcast
  // before, and the grouper decides afresh for it.
  private def singleTask(prev: TaskMapping, ssp: SSP): Option[TaskName] = {
    val ts = prev.tasksOf(ssp)
    if (ts.size == 1) Some(ts.head) else None
  }

  private def originOf(
      config: GrouperConfig,
      stream: String,
      p: Int,
      initial: Int,
      prevCount: Int,
      count: Int
  ): Int = {
    val origin = config.expansion.originPartition(stream, p, initial, count)
    if (origin < 0 || origin >= prevCount)
      throw StreamctlException(
        s"Expansion algorithm '${config.expansionName}' mapped new partition $p of stream '$stream' to partition " +
          s"$origin, which is not one of its $prevCount existing partitions"
      )
    origin
  }
}
