package streamctl.testing

import scala.jdk.CollectionConverters._

import org.apache.kafka.clients.producer.{KafkaProducer, ProducerRecord}

import streamctl.control.{ControlEncoder, EndOfStreamMessage, IntermediateMessage}
import streamctl.system.KafkaParams

/**
 * Writes intermediate-format records directly, for tests, the demo and tools that play an upstream
 * producer without running a query: framed user records and the control messages of a named
 * producer. Called from Python over py4j; a null partition list means every partition, a null
 * timestamp "now".
 *
 * {{{
 * IntermediateTools.produceFramed(servers, "mid", partitions, null, values, null)
 * IntermediateTools.sendWatermark(servers, "mid", null, "p0", 3, 1700000000000L)
 * IntermediateTools.sendEndOfStream(servers, "mid", null, "p0", 3)
 * IntermediateTools.sendIdleStatus(servers, "mid", null, "p0", 3, true, 1700000000000L)
 * }}}
 */
object IntermediateTools {

  /** Writes user records with the type byte 0 in front; returns how many. */
  def produceFramed(
      servers: String,
      stream: String,
      partitions: java.util.List[Integer],
      keys: java.util.List[Array[Byte]],
      values: java.util.List[Array[Byte]],
      timestamps: java.util.List[Number]
  ): Int = {
    KafkaTools.produce(
      servers,
      stream,
      partitions,
      keys,
      values.asScala.map(IntermediateMessage.frameUser).asJava,
      timestamps
    )
  }

  /**
   * Writes `count` framed records of `valueSize` bytes as [[KafkaTools.produceSynthetic]] does;
   * returns how many.
   */
  def produceSyntheticFramed(servers: String, stream: String, count: Long, valueSize: Int): Long =
    KafkaTools.produceRepeated(
      servers,
      stream,
      count,
      IntermediateMessage.frameUser(KafkaTools.syntheticValue(valueSize))
    )

  def sendWatermark(
      servers: String,
      stream: String,
      partitions: java.util.List[Integer],
      producer: String,
      producerCount: Int,
      timestampMs: Long
  ): Unit =
    send(
      servers,
      stream,
      partitions,
      ControlEncoder.forProducer(producer, producerCount).watermark(timestampMs)
    )

  /**
   * End-of-stream to some partitions, without the stream's partition count (as streamctl before it
   * wrote them): a test sending it to a few partitions says nothing about the others.
   */
  def sendEndOfStream(
      servers: String,
      stream: String,
      partitions: java.util.List[Integer],
      producer: String,
      producerCount: Int
  ): Unit =
    send(
      servers,
      stream,
      partitions,
      IntermediateMessage.encode(EndOfStreamMessage(producer, producerCount))
    )

  /**
   * An idle message, or with `idle` false an active one; a null `watermarkMs` means the producer
   * has none.
   */
  def sendIdleStatus(
      servers: String,
      stream: String,
      partitions: java.util.List[Integer],
      producer: String,
      producerCount: Int,
      idle: Boolean,
      watermarkMs: java.lang.Long
  ): Unit = {
    val messages = ControlEncoder.forProducer(producer, producerCount)
    val watermark = Option(watermarkMs).map(_.longValue)
    send(
      servers,
      stream,
      partitions,
      if (idle) messages.idle(watermark) else messages.active(watermark)
    )
  }

  private def send(
      servers: String,
      stream: String,
      partitions: java.util.List[Integer],
      value: Array[Byte]
  ): Unit = {
    val targets = Option(partitions).map(_.asScala.map(_.intValue).toSeq)
      .getOrElse(0 until KafkaTools.partitionCount(servers, stream))
    val p = new KafkaProducer[
      Array[Byte],
      Array[Byte]
    ](KafkaParams(Map("bootstrap.servers" -> servers)).producer)
    try {
      targets.map(i =>
        p.send(new ProducerRecord[Array[Byte], Array[Byte]](
          stream,
          Integer.valueOf(i),
          null,
          value
        ))
      )
        .foreach(_.get())
    } finally p.close()
  }
}
