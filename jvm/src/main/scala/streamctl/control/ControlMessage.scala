package streamctl.control

/**
 * A control message carried in-band in an intermediate stream, as sent by one
 * producer task of the upstream query.
 *
 * `taskName` names the producer task; `taskCount` is how many producer tasks
 * each send their own control messages to every partition, which is what lets a
 * reader know when it has heard from all of them.
 *
 * {{{
 * IntermediateMessage.decode(ssp, offset, bytes) match {
 *   case WatermarkMessage(producer, count, ts) => ...
 *   case EndOfStreamMessage(producer, count)   => ...
 *   case user: UserMessage                     => user.payload
 * }
 * }}}
 */
sealed trait IntermediateRecord

sealed trait ControlMessage extends IntermediateRecord {
  def taskName: String
  def taskCount: Int
}

/** The producer's event-time watermark, epoch milliseconds. */
final case class WatermarkMessage(taskName: String, taskCount: Int, timestamp: Long) extends ControlMessage

/** The producer will send no more data to this partition. */
final case class EndOfStreamMessage(taskName: String, taskCount: Int) extends ControlMessage

/**
 * A user's record with the framing byte removed. Not a case class: array equality
 * would be by reference, which would surprise anyone comparing two of them.
 */
final class UserMessage(val payload: Array[Byte]) extends IntermediateRecord {
  override def toString: String = s"UserMessage(${payload.length} bytes)"
}
