package streamctl.spark

import java.util.concurrent.TimeUnit

import org.apache.kafka.clients.producer.ProducerRecord

import streamctl.StreamctlException
import streamctl.control.ControlMessages
import streamctl.system.{KafkaParams, ProducerPool}

/**
 * Sends the control messages of one streamctl sink of a query, from the driver, to every
 * partition of the sink's intermediate stream (null key, so they never disturb keyed data).
 *
 * The producing query is one producer (`producer.count` 1 by default, named after the
 * query): Spark's writer partitions can change from batch to batch, so they cannot serve as
 * the fixed set of producers a reader counts. Messages are sent after the batch's writers
 * have flushed and committed and before Spark commits the batch, so every control message
 * follows the data it speaks for. A watermark goes out only when it advances.
 *
 * {{{
 * val sender = new ControlMessageSender(kafka, "mid", partitions = 4, () => "query-7", producerCount = 1)
 * sender.watermark(1700000000000L)   // after a batch
 * sender.endOfStream()               // after the last one
 * }}}
 */
final class ControlMessageSender(
    kafka: KafkaParams,
    val stream: String,
    partitions: Int,
    producerName: () => String,
    producerCount: Int) extends ControlSink {

  private lazy val messages = ControlMessages.forProducer(producerName(), producerCount)
  @volatile private var lastWatermark: Option[Long] = None

  override def watermark(timestampMs: Long): Boolean = synchronized {
    messages.watermarkIfAdvanced(lastWatermark, timestampMs) match {
      case Some(bytes) =>
        sendToEveryPartition(bytes, s"watermark $timestampMs")
        lastWatermark = Some(timestampMs)
        true
      case None => false
    }
  }

  override def endOfStream(): Unit = synchronized(sendToEveryPartition(messages.endOfStream, "end-of-stream"))

  override def producer: String = messages.taskName

  override def target: (String, String) = (kafka.bootstrapServers, stream)

  private def sendToEveryPartition(bytes: Array[Byte], what: String): Unit = {
    val producer = ProducerPool.acquire(kafka)
    var failed = true
    try {
      val sent = ControlMessages.toEveryPartition(partitions, bytes).map { case (p, value) =>
        p -> producer.send(new ProducerRecord[Array[Byte], Array[Byte]](stream, Integer.valueOf(p), null, value))
      }
      producer.flush()
      sent.foreach { case (p, future) =>
        try future.get(kafka.apiTimeoutMs, TimeUnit.MILLISECONDS)
        catch {
          case e: Exception =>
            val cause = Option(e.getCause).getOrElse(e)
            throw StreamctlException(s"Sending $what of producer '${messages.taskName}' to stream '$stream' partition $p " +
              s"on Kafka at ${kafka.bootstrapServers} failed: ${cause.getMessage}", cause)
        }
      }
      failed = false
    } finally ProducerPool.release(kafka, producer, failed)
  }

  override def toString: String = s"ControlMessageSender($stream, $partitions partitions)"
}

/** Where a query's control messages go: one intermediate stream, as one producer. */
trait ControlSink {
  def stream: String
  def producer: String
  /** Two sinks with the same target are the same sink. */
  def target: (String, String)
  /** Sends the watermark if it advanced on the last one sent; returns whether it did. */
  def watermark(timestampMs: Long): Boolean
  def endOfStream(): Unit
}
