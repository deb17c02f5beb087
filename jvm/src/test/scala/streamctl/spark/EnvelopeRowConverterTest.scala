package streamctl.spark

import org.apache.kafka.common.header.Header
import org.apache.kafka.common.header.internals.RecordHeader
import org.apache.spark.sql.catalyst.InternalRow
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.control.IntermediateMessage
import streamctl.system.{Envelope, SSP}

/** The converter writes every column of [[SourceSchema]], reusing one buffer row after row. */
class EnvelopeRowConverterTest {
  private val orders = SSP.kafka("orders", 3)

  private def envelope(offset: Long, ts: Long, key: Array[Byte], value: Array[Byte], headers: (String, Array[Byte])*): Envelope =
    new Envelope(orders).fill(offset, ts, 1, key, value, headers.map { case (k, v) => new RecordHeader(k, v): Header }.toArray)

  private def bytes(row: InternalRow, i: Int): Option[String] = if (row.isNullAt(i)) None else Some(new String(row.getBinary(i)))

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
    val converter = new EnvelopeRowConverter("Partition 3", includeHeaders = true)
    val first = converter.toRow(envelope(7, 1700000000123L, "k".getBytes, "hello".getBytes, "a" -> "1".getBytes, "b" -> null), 42L)
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
    val row = new EnvelopeRowConverter("Partition 3", includeHeaders = false)
      .toRow(envelope(7, 5L, null, "v".getBytes, "a" -> "1".getBytes), 42L)
    assertEquals(SourceSchema.FieldCount, row.numFields)
    assertEquals("Partition 3", row.getUTF8String(7).toString)
    assertEquals(42000L, row.getLong(8))
  }

  @Test def anIntermediateValueIsWrittenFromAfterItsFramingByte(): Unit = {
    val e = envelope(1, 2L, null, IntermediateMessage.frameUser("payload".getBytes))
    e.skipValueBytes(IntermediateMessage.PayloadOffset)
    assertEquals(Some("payload"), bytes(new EnvelopeRowConverter("Partition 3", includeHeaders = false).toRow(e, 99L), 1))
  }
}
