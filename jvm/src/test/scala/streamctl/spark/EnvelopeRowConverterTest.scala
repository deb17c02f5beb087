package streamctl.spark

import org.apache.kafka.common.header.Header
import org.apache.kafka.common.header.internals.RecordHeader
import org.apache.spark.sql.catalyst.InternalRow
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.control.IntermediateMessage
import streamctl.system.{Envelope, SSP, TaskName}

/** The converter writes every column of [[SourceSchema]], reusing one buffer row after row. */
class EnvelopeRowConverterTest {
  private val orders = SSP.kafka("orders", 3)

  private def envelope(
      offset: Long,
      ts: Long,
      key: Array[Byte],
      value: Array[Byte],
      headers: (String, Array[Byte])*
  ): Envelope =
    new Envelope(orders).fill(
      offset,
      ts,
      1,
      key,
      value,
      headers.map { case (k, v) => new RecordHeader(k, v): Header }.toArray
    )

  private def bytes(row: InternalRow, i: Int): Option[String] =
    if (row.isNullAt(i)) None else Some(new String(row.getBinary(i)))

  private def headers(row: InternalRow): Option[Seq[(String, Option[String])]] =
    if (row.isNullAt(7)) None
    else {
      val a = row.getArray(7)
      Some((0 until a.numElements()).map { i =>
        val h = a.getStruct(i, 2)
        h.getUTF8String(0).toString -> bytes(h, 1)
      })
    }

  @Test def everyColumnIsWrittenAndTheBufferIsReused(): Unit = {
    val converter = new EnvelopeRowConverter(TaskName("Partition 3"), includeHeaders = true)
    val first = converter.toRow(
      envelope(7, 1700000000123L, "k".getBytes, "hello".getBytes, "a" -> "1".getBytes, "b" -> null),
      42L
    )
    assertEquals(Some("k"), bytes(first, 0))
    assertEquals(Some("hello"), bytes(first, 1))
    assertEquals("orders", first.getUTF8String(2).toString)
    assertEquals(3, first.getInt(3))
    assertEquals(7L, first.getLong(4))
    assertEquals(1700000000123000L, first.getLong(5))
    assertEquals(1, first.getInt(6)) // LogAppendTime, as Kafka's TimestampType id
    assertEquals(Some(Seq("a" -> Some("1"), "b" -> None)), headers(first))
    assertEquals("Partition 3", first.getUTF8String(8).toString)
    assertEquals(42000L, first.getLong(9))

    // The next row is written over the same buffer: nothing of the first may show through.
    val second = converter.toRow(envelope(8, -1L, null, null), -1L)
    assertEquals(None, bytes(second, 0))
    assertEquals(None, bytes(second, 1))
    assertEquals(8L, second.getLong(4))
    assertTrue(second.isNullAt(5))
    assertEquals(None, headers(second))
    assertTrue(second.isNullAt(9))
    assertEquals(10, second.numFields)
  }

  @Test def withoutIncludeHeadersTheStreamctlColumnsFollowTimestampType(): Unit = {
    val row = new EnvelopeRowConverter(TaskName("Partition 3"), includeHeaders = false)
      .toRow(envelope(7, 5L, null, "v".getBytes, "a" -> "1".getBytes), 42L)
    assertEquals(SourceSchema.FieldCount, row.numFields)
    assertEquals("Partition 3", row.getUTF8String(7).toString)
    assertEquals(42000L, row.getLong(8))
  }

  @Test def anIntermediateValueIsWrittenFromAfterItsFramingByte(): Unit = {
    val e = envelope(1, 2L, null, IntermediateMessage.frameUser("payload".getBytes))
    e.skipValueBytes(IntermediateMessage.PayloadOffset)
    assertEquals(
      Some("payload"),
      bytes(
        new EnvelopeRowConverter(TaskName("Partition 3"), includeHeaders = false).toRow(e, 99L),
        1
      )
    )
  }

  private def columns(row: InternalRow, includeHeaders: Boolean): Seq[Any] = {
    val t = if (includeHeaders) 8 else 7
    Seq(
      bytes(row, 0),
      bytes(row, 1),
      row.getUTF8String(2).toString,
      row.getInt(3),
      row.getLong(4),
      if (row.isNullAt(5)) None else Some(row.getLong(5)),
      row.getInt(6),
      if (includeHeaders) headers(row) else "no headers column",
      row.getUTF8String(t).toString,
      if (row.isNullAt(t + 1)) None else Some(row.getLong(t + 1))
    )
  }

  @Test def aReusedConverterWritesExactlyTheBytesOfAFreshOne(): Unit = {
    val big =
      "x" * 1000 // past the writer's first 256 bytes: the buffer grows, then is reused for smaller rows
    val framed = IntermediateMessage.frameUser("after the framing byte".getBytes)
    val cases: Seq[(Envelope, Long, Seq[Any])] = Seq(
      (
        envelope(
          0,
          1700000000123L,
          "k".getBytes,
          "v".getBytes,
          "a" -> "1".getBytes,
          "b" -> null,
          "" -> Array.emptyByteArray
        ),
        42L,
        Seq(
          Some("k"),
          Some("v"),
          "orders",
          3,
          0L,
          Some(1700000000123000L),
          1,
          Some(Seq("a" -> Some("1"), "b" -> None, "" -> Some(""))),
          "Partition 3",
          Some(42000L)
        )
      ),
      (
        envelope(1, -1L, null, null),
        -1L,
        Seq(None, None, "orders", 3, 1L, None, 1, None, "Partition 3", None)
      ),
      (
        envelope(2, 0L, Array.emptyByteArray, Array.emptyByteArray, "only" -> "x".getBytes),
        0L,
        Seq(
          Some(""),
          Some(""),
          "orders",
          3,
          2L,
          Some(0L),
          1,
          Some(Seq("only" -> Some("x"))),
          "Partition 3",
          Some(0L)
        )
      ),
      (
        envelope(3, 5L, null, big.getBytes),
        -1L,
        Seq(None, Some(big), "orders", 3, 3L, Some(5000L), 1, None, "Partition 3", None)
      ),
      (
        envelope(4, 6L, big.getBytes, null, "h" -> big.getBytes),
        7L,
        Seq(
          Some(big),
          None,
          "orders",
          3,
          4L,
          Some(6000L),
          1,
          Some(Seq("h" -> Some(big))),
          "Partition 3",
          Some(7000L)
        )
      ),
      (
        envelope(5, 7L, "short".getBytes, "after the big ones".getBytes),
        8L,
        Seq(
          Some("short"),
          Some("after the big ones"),
          "orders",
          3,
          5L,
          Some(7000L),
          1,
          None,
          "Partition 3",
          Some(8000L)
        )
      ),
      (
        {
          val e = envelope(6, 8L, "k2".getBytes, framed);
          e.skipValueBytes(IntermediateMessage.PayloadOffset); e
        },
        9L,
        Seq(
          Some("k2"),
          Some("after the framing byte"),
          "orders",
          3,
          6L,
          Some(8000L),
          1,
          None,
          "Partition 3",
          Some(9000L)
        )
      )
    )
    for (includeHeaders <- Seq(true, false)) {
      val reused = new EnvelopeRowConverter(TaskName("Partition 3"), includeHeaders)
      for ((e, watermark, expected) <- cases) {
        val what = s"offset ${e.offset}, includeHeaders=$includeHeaders"
        val row = reused.toRow(e, watermark).copy()
        assertEquals(
          if (includeHeaders) expected else expected.updated(7, "no headers column"),
          columns(row, includeHeaders),
          what
        )
        /* Same bytes, padding included, as a converter that never wrote a bigger row: nothing of an
         * earlier row shows through. */
        assertEquals(
          new EnvelopeRowConverter(TaskName("Partition 3"), includeHeaders).toRow(e, watermark),
          row,
          what
        )
      }
    }
  }
}
