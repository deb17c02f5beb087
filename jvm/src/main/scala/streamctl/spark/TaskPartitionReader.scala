package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import streamctl.plan.ReaderConfig
import org.apache.spark.sql.connector.read.PartitionReader

import streamctl.chooser.ChooserFactory
import streamctl.system.{ConsumerPool, EnvelopeDecoder, KafkaTaskReader}

/**
 * Reads one task of one batch on an executor. The consumer comes from the executor's
 * [[ConsumerPool]] and goes back there after a clean read; after a failure it is closed,
 * since its state is unknown.
 */
final class TaskPartitionReader(partition: TaskInputPartition, config: ReaderConfig, runs: TaskRuns)
  extends PartitionReader[InternalRow] {
  private val (consumer, reused) = ConsumerPool.acquireNoting(config.kafka, partition.task)
  runs.record(partition.task, reused) // where the task ran, for host affinity's metrics
  private var healthy = false
  private val control = TaskControlReader(partition, config.intermediateStreams)
  private val reader =
    try new KafkaTaskReader(partition.ranges, consumer, ChooserFactory.forReader(config.chooser,
        partition.ranges.filter(_.size > 0).map(r => r.ssp -> r.from).toMap, partition.bootstrapHeads),
      config.readWait, config.failOnDataLoss,
      ssp => control.fold(EnvelopeDecoder.Identity)(_.decoderFor(ssp)), skipped => runs.record(ReadSkip(skipped)))
    catch { case e: Throwable => ConsumerPool.closeQuietly(consumer); throw e }
  private val converter = new EnvelopeRowConverter(partition.task)
  private var current: InternalRow = _

  override def next(): Boolean = {
    val e = reader.next()
    if (e == null) { control.foreach(_.finish()); healthy = true; false }
    else { current = converter.toRow(e, control.fold(-1L)(_.watermarkMs(e.ssp))); true }
  }

  override def get(): InternalRow = current

  override def close(): Unit = {
    reader.close()
    if (healthy) ConsumerPool.release(config.kafka, partition.task, consumer) else ConsumerPool.closeQuietly(consumer)
  }
}
