package streamctl.grouper

import streamctl.system.{SSP, TaskName}

/**
 * Makes tasks from SSPs. `previous` is the SSP -> task mapping recorded in the metadata store by
 * the last run (empty on the first run); a grouper keeps existing SSPs on their task so that task
 * names stay stable across restarts and partition expansion.
 *
 * {{{
 * val tasks = new GroupByPartition().group(Map.empty, Set(SSP.kafka("a", 0), SSP.kafka("b", 0)))
 * // Map(TaskName("Partition 0") -> Set(a-0, b-0))
 * }}}
 */
trait SystemStreamPartitionGrouper {
  def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]]
}
