package streamctl.grouper

import streamctl.system.SSP

/** SSPs with the same partition number form task `Partition N` (Samza's default). */
class GroupByPartition extends SystemStreamPartitionGrouper {
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    ssps.groupBy(ssp => previous.getOrElse(ssp, TaskName(s"Partition ${ssp.partition}")))
}
