package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import streamctl.plan.ReaderConfig
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

final case class TaskReaderFactory(config: ReaderConfig, runs: TaskRuns) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new TaskPartitionReader(partition.asInstanceOf[TaskInputPartition], config, runs)
}
