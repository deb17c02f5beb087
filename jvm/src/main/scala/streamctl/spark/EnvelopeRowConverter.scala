package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
// Catalyst's row writers are internal, used here only: a DataSource V2 reader hands Spark
// InternalRows, and writing one UnsafeRow in place is what keeps a record free of allocation (the
// rate the read benchmarks measure). Their constructors are the same on every Spark line built.
import org.apache.spark.sql.catalyst.expressions.codegen.{UnsafeArrayWriter, UnsafeRowWriter}
import org.apache.spark.unsafe.types.UTF8String

import streamctl.system.{Envelope, TaskName}

/**
 * Turns envelopes into rows of [[SourceSchema]], the last step of the reader path: the bytes go
 * straight from the Kafka consumer's arrays into the row (an intermediate stream's value from after
 * its framing byte), through one reused `UnsafeRowWriter`, so a record costs no allocation here (a
 * record with headers pays for its header names). One per reader; the row returned is valid until
 * the next call, as Spark expects of a `PartitionReader`.
 *
 * {{{
 * val converter = new EnvelopeRowConverter(TaskName("Partition 0"), includeHeaders = false)
 * val row = converter.toRow(envelope, watermarkMs = -1L)   // -1: no watermark (null)
 * }}}
 */
final class EnvelopeRowConverter(task: TaskName, includeHeaders: Boolean) {
  private val row = new UnsafeRowWriter(
    if (includeHeaders) SourceSchema.FieldCountWithHeaders else SourceSchema.FieldCount,
    256
  )
  /* array<struct<key:string,value:binary>>: an element is the (offset, size) of its struct, 8
   * bytes. */
  private val headers = new UnsafeArrayWriter(row, 8)
  private val header = new UnsafeRowWriter(headers, 2)
  private val taskName = UTF8String.fromString(task.name)
  private val streamNames = new java.util.HashMap[String, UTF8String]()
  private val taskField = if (includeHeaders) 8 else 7

  // Consecutive records mostly share a stream: remember the last one instead of hashing per record.
  private var lastStream: String = _
  private var lastStreamName: UTF8String = _

  private def streamName(stream: String): UTF8String = {
    if (stream ne lastStream) {
      lastStreamName = streamNames.computeIfAbsent(stream, s => UTF8String.fromString(s))
      lastStream = stream
    }
    lastStreamName
  }

  def toRow(e: Envelope, watermarkMs: Long): InternalRow = {
    row.reset()
    row.zeroOutNullBytes()
    if (e.key == null) row.setNullAt(0) else row.write(0, e.key)
    if (e.value == null) row.setNullAt(1) else row.write(1, e.value, e.valueOffset, e.valueLength)
    row.write(2, streamName(e.ssp.stream))
    row.write(3, e.ssp.partition)
    row.write(4, e.offset)
    if (e.timestamp >= 0) row.write(5, e.timestamp * 1000L) else row.setNullAt(5)
    row.write(6, e.timestampType)
    if (includeHeaders) writeHeaders(e)
    row.write(taskField, taskName)
    if (watermarkMs >= 0) row.write(taskField + 1, watermarkMs * 1000L)
    else row.setNullAt(taskField + 1)
    row.getRow
  }

  private def writeHeaders(e: Envelope): Unit = {
    val hs = e.headers
    if (hs.length == 0) row.setNullAt(7)
    else {
      val start = row.cursor()
      headers.initialize(hs.length)
      var i = 0
      while (i < hs.length) {
        val elementStart = headers.cursor()
        header.resetRowWriter()
        header.write(0, UTF8String.fromString(hs(i).key()))
        val v = hs(i).value()
        if (v == null) header.setNullAt(1) else header.write(1, v)
        headers.setOffsetAndSizeFromPreviousCursor(i, elementStart)
        i += 1
      }
      row.setOffsetAndSizeFromPreviousCursor(7, start)
    }
  }
}
