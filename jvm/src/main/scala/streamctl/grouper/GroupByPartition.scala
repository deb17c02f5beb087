package streamctl.grouper

import streamctl.system.{SSP, TaskName}

/**
 * Grouper `partition` (the default, as in Samza): SSPs with the same partition number form task
 * `Partition N`, so streams partitioned alike are read together (joins by partition). SSPs already
 * in `previous` stay on their task, which is how expanded partitions stay with their origin
 * partition's task.
 *
 * {{{
 * new GroupByPartition().group(Map.empty, Set(SSP.kafka("a", 0), SSP.kafka("b", 0), SSP.kafka("a", 1)))
 * // Map(Partition 0 -> Set(a-0, b-0), Partition 1 -> Set(a-1))
 * }}}
 */
class GroupByPartition extends SystemStreamPartitionGrouper {
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    ssps.groupBy(ssp => previous.getOrElse(ssp, GroupByPartition.taskName(ssp.partition)))
}

object GroupByPartition {
  def taskName(partition: Int): TaskName = TaskName.ofPartition(partition)
}
