package streamctl.spark

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.util.SerializableConfiguration

import streamctl.control.ControlResults
import streamctl.metadata.FileSystemMetadataStore
import streamctl.planner.ReaderConfig

/**
 * Makes the reader of each task, on its executor. A micro-batch reader of intermediate streams
 * reports its control results to `controlReports` (None when the source has none: an accumulator in
 * the factory travels to and back from every task attempt); `storePath`, `controlNamespace` and
 * `hadoopConf` say where a real-time one records them as it reads, and `positions` (real-time mode
 * with option commitOffsets) is where it reports how far it read.
 *
 * Spark deserializes a reader factory anew in every task attempt, so the source's reader
 * configuration (its Kafka settings, chooser, streams) comes as a broadcast: an executor
 * deserializes it once, and an attempt only the handle.
 */
final case class TaskReaderFactory(
    config: Broadcast[ReaderConfig],
    reports: ReaderAccumulator,
    controlReports: Option[ControlAccumulator],
    storePath: String,
    controlNamespace: String,
    hadoopConf: Broadcast[SerializableConfiguration],
    positions: Option[PositionAccumulator]
) extends PartitionReaderFactory {

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new TaskPartitionReader(
      partition.asInstanceOf[TaskInputPartition].read,
      storePath, // the consumer pool's owner: this source's, kept apart from other queries'
      config.value,
      reports,
      controlReports,
      Some(() =>
        new ControlResults(
          new FileSystemMetadataStore(storePath, hadoopConf.value.value),
          controlNamespace
        )
      ),
      positions
    )
}

/**
 * Makes the reader of each task of a batch read (`spark.read`), which keeps no bookkeeping. Its
 * consumers are pooled apart from every streaming query's, under one owner for all batch reads.
 */
final case class BatchReaderFactory(config: Broadcast[ReaderConfig], reports: ReaderAccumulator)
    extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new TaskPartitionReader(
      partition.asInstanceOf[TaskInputPartition].read,
      "batch read",
      config.value,
      reports,
      None,
      None,
      None
    )
}
