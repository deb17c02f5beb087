package streamctl.spark

import streamctl.StreamctlException
import streamctl.system.{Envelope, EnvelopeDecoder}

/**
 * Strips the type byte of intermediate streams. Control messages (watermark, end-of-stream)
 * are not rows; they are consumed here.
 */
object IntermediateDecoder extends EnvelopeDecoder {
  override def decode(e: Envelope): Envelope = {
    val v = e.value
    if (v == null || v.length == 0)
      throw StreamctlException(s"Record of intermediate stream '${e.ssp.stream}' partition ${e.ssp.partition} offset ${e.offset} " +
        "has no framing byte (was it written by streamctl's sink?)")
    v(0) match {
      case 0 => new Envelope(e.ssp, e.offset, e.timestamp, e.key, java.util.Arrays.copyOfRange(v, 1, v.length), e.headerKeys, e.headerValues)
      case 1 | 2 => null
      case t => throw StreamctlException(s"Record of intermediate stream '${e.ssp.stream}' partition ${e.ssp.partition} " +
        s"offset ${e.offset} has unknown type byte $t")
    }
  }
}
