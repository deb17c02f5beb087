package streamctl.system

/**
 * One message read from an SSP. Arrays are not copied: the reader hands over what
 * the Kafka consumer produced, and nobody mutates it.
 *
 * `timestamp` is epoch milliseconds, or -1 when the record has none (Kafka CreateTime -1).
 * `headerKeys`/`headerValues` are null when the record has no headers (the common case
 * costs no allocation).
 */
final class Envelope(
    val ssp: SSP,
    val offset: Long,
    val timestamp: Long,
    val key: Array[Byte],
    val value: Array[Byte],
    val headerKeys: Array[String] = null,
    val headerValues: Array[Array[Byte]] = null) {
  override def toString: String = s"Envelope($ssp@$offset, ts=$timestamp)"
}
