package streamctl.system

import org.apache.kafka.common.header.Header

/**
 * One message read from an SSP, as a chooser sees it (Samza's envelope).
 *
 * Nothing is copied or allocated per message: the reader keeps one envelope per SSP it reads and
 * refills it with that SSP's next message once the previous one was chosen, and the arrays are the
 * Kafka consumer's own. So an envelope is valid until the next envelope of its SSP is offered: a
 * chooser must not keep one after returning it from `choose` (see `chooser.MessageChooser`). The
 * value of an intermediate stream's user message is its bytes after the framing type byte:
 * [[valueLength]] bytes of [[value]] from [[valueOffset]].
 *
 * `timestamp` is epoch milliseconds, or -1 when the record has none (Kafka CreateTime -1).
 *
 * {{{
 * val e = new Envelope(SSP.kafka("orders", 0), offset = 42, timestamp = 1700000000000L, key = null, value = bytes)
 * e.payload   // a copy of the value bytes (allocates: not for the per-record path)
 * }}}
 */
final class Envelope private[streamctl] (val ssp: SSP) {
  private var offset0 = 0L
  private var timestamp0 = -1L
  private var timestampType0 = -1
  private var key0: Array[Byte] = _
  private var value0: Array[Byte] = _
  private var valueOffset0 = 0
  private var headers0: Array[Header] = Envelope.NoHeaders

  /** A standalone envelope, for a chooser's tests or its own use. */
  def this(ssp: SSP, offset: Long, timestamp: Long, key: Array[Byte], value: Array[Byte]) = {
    this(ssp)
    fill(offset, timestamp, Envelope.CreateTime, key, value, Envelope.NoHeaders)
  }

  def offset: Long = offset0
  def timestamp: Long = timestamp0

  /**
   * Kafka's `TimestampType` id, as Spark's column `timestampType`: 0 CreateTime, 1 LogAppendTime,
   * -1 none.
   */
  def timestampType: Int = timestampType0
  def key: Array[Byte] = key0

  /**
   * The array holding the value (null for a record without one); the value starts at
   * [[valueOffset]].
   */
  def value: Array[Byte] = value0
  def valueOffset: Int = valueOffset0
  def valueLength: Int = if (value0 == null) 0 else value0.length - valueOffset0

  /** A copy of the value's bytes, or null; allocates, so not for the per-record path. */
  def payload: Array[Byte] =
    if (value0 == null) null else java.util.Arrays.copyOfRange(value0, valueOffset0, value0.length)

  /** The record's headers, Kafka's own objects (empty when it has none). */
  private[streamctl] def headers: Array[Header] = headers0

  /** Makes this the envelope of another message of the same SSP. */
  private[streamctl] def fill(
      offset: Long,
      timestamp: Long,
      timestampType: Int,
      key: Array[Byte],
      value: Array[Byte],
      headers: Array[Header]
  ): Envelope = {
    offset0 = offset
    timestamp0 = timestamp
    timestampType0 = timestampType
    key0 = key
    value0 = value
    valueOffset0 = 0
    headers0 = headers
    this
  }

  /** The value starts `bytes` further on (a framing byte was read). */
  private[streamctl] def skipValueBytes(bytes: Int): Unit = valueOffset0 += bytes

  override def toString: String = s"Envelope($ssp@$offset0, ts=$timestamp0)"
}

object Envelope {
  private val NoHeaders: Array[Header] = Array.empty
  val CreateTime = 0
}
