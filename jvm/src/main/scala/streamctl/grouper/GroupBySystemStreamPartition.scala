package streamctl.grouper

import streamctl.system.{SSP, TaskName}

/**
 * Grouper `ssp`: one task per SSP, the finest split. The task name spells out system, stream and
 * partition (`SystemStreamPartition [kafka, orders, 3]`, Samza's form): it is derived from the SSP
 * alone, so it is the same on every run, and Kafka topic names cannot contain `,`, `[` or `]`, so
 * no two SSPs share a name. After expansion a task keeps this name while also reading the new
 * partitions mapped to it.
 *
 * {{{
 * new GroupBySystemStreamPartition().group(Map.empty, Set(SSP.kafka("orders", 3)))
 * // Map(SystemStreamPartition [kafka, orders, 3] -> Set(orders-3))
 * }}}
 */
class GroupBySystemStreamPartition extends SystemStreamPartitionGrouper {
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    ssps.groupBy(ssp => previous.getOrElse(ssp, GroupBySystemStreamPartition.taskName(ssp)))
}

object GroupBySystemStreamPartition {
  def taskName(ssp: SSP): TaskName =
    TaskName(s"SystemStreamPartition [${ssp.system}, ${ssp.stream}, ${ssp.partition}]")
}
