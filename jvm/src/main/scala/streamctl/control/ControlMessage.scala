package streamctl.control

/**
 * A control message carried in-band in an intermediate stream, as sent by one producer of the
 * upstream query.
 *
 * `producer` names the producer; `producerCount` is how many producers each send their own control
 * messages to every partition, which is what lets a reader know when it has heard from all of them.
 * (On the wire they are `taskName` and `taskCount`, Samza's names: there a producer is a task; here
 * it is a query, see [[ControlEncoder]].)
 *
 * {{{
 * IntermediateMessage.decodeControl(ssp, offset, bytes) match {
 *   case WatermarkMessage(producer, count, ts) => ...
 *   case EndOfStreamMessage(producer, count, n) => ...  // n: partitions it went to, if said
 *   case IdleMessage(producer, count, wm)      => ...   // wm: the producer's watermark, if it has one
 *   case ActiveMessage(producer, count, wm)    => ...
 * }
 * }}}
 */
sealed trait ControlMessage {
  def producer: String
  def producerCount: Int
}

/** The producer's event-time watermark, epoch milliseconds. */
final case class WatermarkMessage(producer: String, producerCount: Int, timestamp: Long)
    extends ControlMessage

/**
 * The producer will send no more data to this partition. `partitions` is how many partitions the
 * stream had when the producer sent it (to each of them), when the producer said so (earlier
 * streamctl did not): a partition added later never had data or end-of-stream from it, so a reader
 * counts the producer as ended there too ([[SspControlStates.withEndsBeforeGrowth]]).
 */
final case class EndOfStreamMessage(
    producer: String,
    producerCount: Int,
    partitions: Option[Int] = None
) extends ControlMessage

/**
 * The producer has had nothing to write for a while: readers leave it out of the watermark minimum
 * until it says [[ActiveMessage]] (or sends a watermark) again. `watermark` is the producer's own
 * (epoch ms) when it has one; it never holds anyone back while idle.
 */
final case class IdleMessage(producer: String, producerCount: Int, watermark: Option[Long])
    extends ControlMessage

/**
 * The producer is about to write again after being idle (or may have been: every run starts with
 * one). Sent to every partition before its first data, because data messages carry no producer
 * name: this is what brings the producer back into the watermark minimum.
 */
final case class ActiveMessage(producer: String, producerCount: Int, watermark: Option[Long])
    extends ControlMessage
