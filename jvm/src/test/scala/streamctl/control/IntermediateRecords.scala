package streamctl.control

import java.util.Arrays

import streamctl.system.SSP

/**
 * Whole records of an intermediate stream, as tests read them: the product reads a user message's
 * payload in place ([[IntermediateMessage.typeOf]] plus an offset view) and decodes only control
 * messages.
 *
 * {{{
 * IntermediateRecords.decode(ssp, offset, bytes) match {
 *   case w: WatermarkMessage => w.timestamp
 *   case user: UserMessage   => user.payload
 * }
 * }}}
 */
object IntermediateRecords {

  /** A [[UserMessage]] or the [[ControlMessage]] the record holds. */
  def decode(ssp: SSP, offset: Long, bytes: Array[Byte]): AnyRef =
    if (IntermediateMessage.typeOf(ssp, offset, bytes) == IntermediateMessage.UserType)
      new UserMessage(Arrays.copyOfRange(bytes, IntermediateMessage.PayloadOffset, bytes.length))
    else IntermediateMessage.decodeControl(ssp, offset, bytes)
}

/**
 * A user's record with the framing byte removed. Not a case class: array equality would be by
 * reference, which would surprise anyone comparing two of them.
 */
final class UserMessage(val payload: Array[Byte]) {
  override def toString: String = s"UserMessage(${payload.length} bytes)"
}
