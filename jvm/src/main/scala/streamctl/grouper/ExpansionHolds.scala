package streamctl.grouper

import streamctl.system.{SSP, TaskName}

/**
 * Order across a partition expansion. When a stream grows, a key that lived in partition 0 may now
 * be written to partition 2, read by the same task. Its old records must reach the task before its
 * new ones, but they sit in different partitions and Kafka orders nothing across partitions. So a
 * new partition is held (admitted nothing) until every older partition of the same stream in its
 * task has been read up to its head at the moment the growth was seen (its barrier). Those older
 * records then all belong to earlier batches than any record of the new partition, whatever the
 * reader's chooser does inside a batch.
 *
 * Decided on the driver from offsets alone and carried in the offset ([[GroupingState]]), so a
 * replayed batch holds and releases exactly as the original did. The barrier is a little later than
 * the real expansion (by up to `partition.check.interval`): records the old partitions received in
 * between are delivered first too, which only strengthens the order. The price is latency: while
 * the old partitions work off a backlog up to the barrier, the new ones wait.
 *
 * {{{
 * val holds = ExpansionHolds.place(Map(orders2 -> p0), begins, _.partition < 2, olds => admin.upcomingOffsets(olds))
 * val still = ExpansionHolds.release(holds, plan.minBegins)   // empty once orders-0 reached its barrier
 * plan.copy(held = still.keySet)   // a held SSP ends where it begins (BatchPlan.reachable)
 * }}}
 */
object ExpansionHolds {

  /** New SSP -> the older SSPs of its task and stream, each with the offset it must reach first. */
  type Holds = Map[SSP, Map[SSP, Long]]

  /**
   * Holds for the partitions `added` by an expansion (each with its task): every partition of the
   * same stream in that task for which `older` is true, with its barrier. `barriers` is asked once,
   * for all of them.
   */
  def place(
      added: Map[SSP, TaskName],
      begins: Map[TaskName, Map[SSP, Long]],
      older: SSP => Boolean,
      barriers: Set[SSP] => Map[SSP, Long]
  ): Holds = {
    if (added.isEmpty) return Map.empty
    val olderOf = added.map { case (n, task) =>
      n -> begins.getOrElse(task, Map.empty).keySet.filter(o => o.stream == n.stream && older(o))
    }
    val barrier = barriers(olderOf.values.flatten.toSet)
    olderOf.map { case (n, olds) => n -> olds.iterator.map(o => o -> barrier(o)).toMap }
  }

  /**
   * The holds still needed at `positions` (where each SSP begins in the batch being planned): a
   * hold ends when its SSP is no longer read or every older SSP has reached its barrier. Only the
   * older SSPs still short of their barrier are kept.
   */
  def release(holds: Holds, positions: Map[SSP, Long]): Holds = holds.flatMap { case (n, until) =>
    val pending = until.filter { case (o, u) => positions.get(o).exists(_ < u) }
    if (pending.isEmpty || !positions.contains(n)) None else Some(n -> pending)
  }
}
