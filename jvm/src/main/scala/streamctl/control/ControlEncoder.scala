package streamctl.control

/**
 * Encodes the control messages one producer (a query writing the stream) sends. Every partition of
 * every intermediate stream the query writes gets the same bytes, sent after the data they speak
 * for (in-band ordering), so a reader of any partition hears from every producer; when and where
 * each goes is [[ProducerControl]]'s.
 *
 * `producerCount` must be the number of producers that will each send their own messages to every
 * partition; how a query names its producers is the sink's choice. Two workable choices: one
 * producer per query (count 1, messages sent by the driver after the batch's writers have
 * committed), or one per fixed writer partition.
 *
 * {{{
 * val control = ControlEncoder.forProducer("orders-enricher", producerCount = 4)
 * send(topic, partition, control.watermark(eventTimeWatermark))
 * send(topic, partition, control.idle(Some(eventTimeWatermark)))
 * send(topic, partition, control.endOfStream(partitions = 8))
 * }}}
 */
final class ControlEncoder private (val producer: String, val producerCount: Int) {
  IntermediateMessage.checkProducer(producer, producerCount)

  def watermark(timestamp: Long): Array[Byte] =
    IntermediateMessage.watermark(producer, producerCount, timestamp)

  /**
   * End-of-stream, sent to each of the stream's `partitions`. A fresh array each call: callers hand
   * it to a producer and must not share a mutable buffer.
   */
  def endOfStream(partitions: Int): Array[Byte] =
    IntermediateMessage.endOfStream(producer, producerCount, partitions)

  /** "Nothing to write for now", with the producer's watermark when it has one. */
  def idle(watermark: Option[Long]): Array[Byte] =
    IntermediateMessage.idle(producer, producerCount, watermark)

  /** "Writing again": sent to every partition before the producer's first data after [[idle]]. */
  def active(watermark: Option[Long]): Array[Byte] =
    IntermediateMessage.active(producer, producerCount, watermark)

  override def toString: String = s"ControlEncoder(producer '$producer' of $producerCount)"
}

object ControlEncoder {
  def forProducer(producer: String, producerCount: Int): ControlEncoder =
    new ControlEncoder(producer, producerCount)
}
