package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader

import streamctl.chooser.ChooserFactory
import streamctl.control.{ControlResults, TaskControlReader}
import streamctl.plan.{ReaderConfig, TaskRead}
import streamctl.system.{ConsumerPool, EnvelopeDecoder, KafkaTaskReader}

/**
 * Reads one task of one batch on an executor, one way: Kafka reader -> control decoding ->
 * chooser -> row. The consumer comes from the executor's [[ConsumerPool]] and goes back there
 * after a clean read; after a failure it is closed, since its state is unknown. A batch read
 * (`spark.read`) keeps no control bookkeeping: `controlResults` is None.
 */
final class TaskPartitionReader(read: TaskRead, config: ReaderConfig, reports: ReaderAccumulator,
                                controlResults: Option[() => ControlResults]) extends PartitionReader[InternalRow] {
  private val (consumer, reused) = ConsumerPool.acquireNoting(config.kafka, read.task)
  reports.ran(read.task, reused) // where the task ran, for host affinity's metrics
  private var healthy = false
  private val control = TaskControlReader(read.task, read.ranges, read.control, config.intermediateStreams)
  private val reader =
    try new KafkaTaskReader(read.ranges, consumer, ChooserFactory.forReader(config.chooser,
        read.ranges.filter(_.size > 0).map(r => r.ssp -> r.from).toMap, read.bootstrapHeads),
      config.readWait, config.failOnDataLoss,
      ssp => control.fold(EnvelopeDecoder.Identity)(_.decoderFor(ssp)), reports.skip)
    catch { case e: Throwable => ConsumerPool.closeQuietly(consumer); throw e }
  private val converter = new EnvelopeRowConverter(read.task, config.includeHeaders)
  private var current: InternalRow = _

  override def next(): Boolean = {
    val e = reader.next()
    if (e == null) {
      for (c <- control; results <- controlResults) c.finish(states => results().put(c.control.seq, read.task, states))
      healthy = true
      false
    } else {
      current = converter.toRow(e, control.fold(-1L)(_.watermarkMs(e.ssp)))
      true
    }
  }

  override def get(): InternalRow = current

  override def close(): Unit = {
    reader.close()
    if (healthy) ConsumerPool.release(config.kafka, read.task, consumer) else ConsumerPool.closeQuietly(consumer)
  }
}
