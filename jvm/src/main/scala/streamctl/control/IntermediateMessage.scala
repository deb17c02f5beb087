package streamctl
package control

import java.io.ByteArrayOutputStream

import com.fasterxml.jackson.core.StreamReadFeature
import com.fasterxml.jackson.databind.{DeserializationFeature, JsonNode, ObjectReader}

import streamctl.{Json, StreamctlException}
import streamctl.system.SSP

/**
 * The wire format of an intermediate stream: one type byte, then either the user's bytes untouched
 * (type 0) or a JSON control payload (1 watermark, 2 end-of-stream, 3 idle, 4 active) with
 * `version`, `taskName`, `taskCount` and `timestamp` (epoch ms): required for a watermark, present
 * in idle and active messages when the producer has a watermark, absent from end-of-stream. An
 * end-of-stream carries `partitions`, the stream's partition count it was sent to (readers before
 * it ignore the field; one without it, from an earlier writer, reads as not saying).
 *
 * Reading is strict: an unknown type byte, a newer version, malformed JSON or a value without its
 * framing byte is an error naming stream, partition and offset. Guessing would either drop a user's
 * record or misread a newer producer's control message.
 *
 * {{{
 * val framed = IntermediateMessage.frameUser("hello".getBytes)   // [0, h, e, l, l, o]
 * val wm     = IntermediateMessage.watermark("Partition 0", 3, 1700000000000L)
 *
 * // hot path, no allocation: check the type, then use bytes[PayloadOffset, length)
 * if (IntermediateMessage.typeOf(ssp, offset, framed) == IntermediateMessage.UserType)
 *   sink.write(framed, IntermediateMessage.PayloadOffset, IntermediateMessage.payloadLength(framed))
 *
 * IntermediateMessage.decode(ssp, offset, wm) // WatermarkMessage("Partition 0", 3, 1700000000000L)
 * }}}
 */
object IntermediateMessage {
  final val UserType: Byte = 0
  final val WatermarkType: Byte = 1
  final val EndOfStreamType: Byte = 2
  final val IdleType: Byte = 3
  final val ActiveType: Byte = 4

  /** The control payload version this code writes and the newest it can read. */
  final val Version: Int = 1

  /** Where the user's bytes start inside a framed record. */
  final val PayloadOffset: Int = 1

  // Trailing garbage and duplicate keys are rejected: a payload that only half parses
  // is exactly the kind of input the reader must not guess about.
  private val strictReader: ObjectReader = Json.mapper.reader()
    .`with`(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
    .`with`(StreamReadFeature.STRICT_DUPLICATE_DETECTION)

  // ---------------------------------------------------------------- encoding

  /** Frames a user's record: one allocation, one copy. The payload is not modified. */
  def frameUser(payload: Array[Byte]): Array[Byte] = {
    val out = userFrame(payload.length)
    System.arraycopy(payload, 0, out, PayloadOffset, payload.length)
    out
  }

  /**
   * A framed user record whose `payloadLength` bytes the caller writes at [[PayloadOffset]], so a
   * writer holding the payload elsewhere (a Spark row) copies it once, straight into the frame.
   */
  def userFrame(payloadLength: Int): Array[Byte] =
    new Array[Byte](payloadLength + PayloadOffset) // zero-filled: out(0) is UserType

  def watermark(producer: String, producerCount: Int, timestamp: Long): Array[Byte] =
    encode(WatermarkMessage(producer, producerCount, timestamp))

  def endOfStream(producer: String, producerCount: Int, partitions: Int): Array[Byte] =
    encode(EndOfStreamMessage(producer, producerCount, Some(partitions)))

  def idle(producer: String, producerCount: Int, watermark: Option[Long]): Array[Byte] =
    encode(IdleMessage(producer, producerCount, watermark))

  def active(producer: String, producerCount: Int, watermark: Option[Long]): Array[Byte] =
    encode(ActiveMessage(producer, producerCount, watermark))

  def encode(message: ControlMessage): Array[Byte] = {
    checkProducer(message.producer, message.producerCount)
    val node = Json.obj()
    node.put("version", Version)
    node.put("taskName", message.producer)
    node.put("taskCount", message.producerCount)
    val typeByte = message match {
      case w: WatermarkMessage =>
        node.put("timestamp", w.timestamp)
        WatermarkType
      case e: EndOfStreamMessage =>
        e.partitions.foreach(node.put("partitions", _))
        EndOfStreamType
      case i: IdleMessage =>
        i.watermark.foreach(node.put("timestamp", _))
        IdleType
      case a: ActiveMessage =>
        a.watermark.foreach(node.put("timestamp", _))
        ActiveType
    }
    val out = new ByteArrayOutputStream(96)
    out.write(typeByte.toInt)
    Json.mapper.writeValue(out, node)
    out.toByteArray
  }

  private[control] def checkProducer(producer: String, producerCount: Int): Unit = {
    if (producer == null || producer.isEmpty)
      throw StreamctlException("A control message needs a non-empty producer name")
    if (producerCount < 1)
      throw StreamctlException(
        s"Producer '$producer': taskCount must be at least 1, got $producerCount"
      )
  }

  // ---------------------------------------------------------------- decoding

  /**
   * The checked type byte of a record: [[UserType]] or one of the control types. Allocation-free,
   * for the per-record path; a user payload is then
   * `bytes[PayloadOffset, PayloadOffset + payloadLength(bytes))`.
   */
  def typeOf(ssp: SSP, offset: Long, bytes: Array[Byte]): Byte = {
    if (bytes == null || bytes.length == 0)
      throw ControlErrors.at(
        ssp,
        offset,
        s"${if (bytes == null) "null" else "empty"} value has no framing type byte; " +
          "was this record written by something other than the streamctl sink?"
      )
    val t = bytes(0)
    if (t < UserType || t > ActiveType)
      throw ControlErrors.at(
        ssp,
        offset,
        s"unknown type byte $t (expected $UserType user, $WatermarkType watermark, $EndOfStreamType end-of-stream, " +
          s"$IdleType idle, $ActiveType active); if a newer streamctl wrote it, upgrade streamctl in the consuming " +
          "query; else the record was written by something other than the streamctl sink"
      )
    t
  }

  def payloadLength(bytes: Array[Byte]): Int = bytes.length - PayloadOffset

  /** Decodes a record that must be a control message; a user message here is an error. */
  def decodeControl(ssp: SSP, offset: Long, bytes: Array[Byte]): ControlMessage = {
    val t = typeOf(ssp, offset, bytes)
    if (t == UserType)
      throw ControlErrors.at(ssp, offset, "expected a control message, found a user message")
    val kind = KindNames(t)
    val node = parse(ssp, offset, bytes, kind)
    def bad(problem: String) =
      ControlErrors.at(ssp, offset, s"$kind message $problem: ${printable(bytes)}")

    // Version first: a newer producer may have changed every other field. The one version rule
    // of every streamctl format, so a bad version reads the same here as in a checkpoint or store.
    Json.version(
      node,
      Version,
      s"the $kind message at intermediate ${ControlErrors.where(ssp, offset)}"
    )

    val producer = node.get("taskName") match {
      case n if n != null && n.isTextual && !n.asText.isEmpty => n.asText
      case _ => throw bad("needs a non-empty string 'taskName'")
    }
    val producerCount = intField(node, "taskCount", bad)
    if (producerCount < 1) throw bad(s"has taskCount $producerCount, must be at least 1")

    val timestamp = Option(node.get("timestamp")).map { ts =>
      if (!ts.isIntegralNumber || !ts.canConvertToLong)
        throw bad("has a 'timestamp' that is not an integer (epoch ms)")
      ts.longValue
    }
    t match {
      case WatermarkType =>
        WatermarkMessage(
          producer,
          producerCount,
          timestamp.getOrElse(throw bad("needs an integer 'timestamp' (epoch ms)"))
        )
      case EndOfStreamType =>
        val partitions = Option(node.get("partitions")).map { _ =>
          val n = intField(node, "partitions", bad)
          if (n < 1) throw bad(s"has partitions $n, must be at least 1")
          n
        }
        EndOfStreamMessage(producer, producerCount, partitions)
      case IdleType => IdleMessage(producer, producerCount, timestamp)
      case _ => ActiveMessage(producer, producerCount, timestamp)
    }
  }

  private val KindNames: Map[Byte, String] =
    Map(
      WatermarkType -> "watermark",
      EndOfStreamType -> "end-of-stream",
      IdleType -> "idle",
      ActiveType -> "active"
    )

  private def parse(ssp: SSP, offset: Long, bytes: Array[Byte], kind: String): JsonNode = {
    val node =
      try strictReader.readTree(bytes, PayloadOffset, payloadLength(bytes))
      catch {
        case e: Exception =>
          val first =
            Option(e.getMessage).flatMap(_.linesIterator.nextOption()).getOrElse(e.toString)
          throw ControlErrors.at(
            ssp,
            offset,
            s"malformed JSON in $kind message ($first): ${printable(bytes)}",
            e
          )
      }
    if (node == null || !node.isObject)
      throw ControlErrors.at(
        ssp,
        offset,
        s"$kind message payload is not a JSON object: ${printable(bytes)}"
      )
    node
  }

  private def intField(node: JsonNode, name: String, bad: String => StreamctlException): Int = {
    val f = node.get(name)
    if (f == null || !f.isIntegralNumber || !f.canConvertToInt)
      throw bad(s"needs an integer '$name'")
    f.intValue
  }

  /**
   * A bounded, printable excerpt of a payload for error messages; never the whole of a huge record.
   */
  private def printable(bytes: Array[Byte]): String = {
    val n = math.min(payloadLength(bytes), 200)
    val text = new String(bytes, PayloadOffset, n, java.nio.charset.StandardCharsets.UTF_8)
      .map(c => if (c.isControl) '?' else c)
    if (n < payloadLength(bytes)) s"'$text...' (${payloadLength(bytes)} bytes)" else s"'$text'"
  }
}
