package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.unsafe.types.UTF8String

import streamctl.system.Envelope

/** Turns envelopes into rows of [[SourceSchema]]; one per reader, reusing its buffers. */
final class EnvelopeRowConverter(task: String) {
  private val row = new GenericInternalRow(SourceSchema.schema.length)
  private val project = UnsafeProjection.create(SourceSchema.schema)
  private val taskName = UTF8String.fromString(task)
  private val streamNames = new java.util.HashMap[String, UTF8String]()

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
    row.update(0, e.key)
    row.update(1, e.value)
    row.update(2, streamName(e.ssp.stream))
    row.setInt(3, e.ssp.partition)
    row.setLong(4, e.offset)
    if (e.timestamp >= 0) row.setLong(5, e.timestamp * 1000L) else row.setNullAt(5)
    if (e.headerKeys == null) row.setNullAt(6)
    else row.update(6, new GenericArrayData(e.headerKeys.indices.map { i =>
      new GenericInternalRow(Array[Any](UTF8String.fromString(e.headerKeys(i)), e.headerValues(i)))
    }.toArray[Any]))
    row.update(7, taskName)
    if (watermarkMs >= 0) row.setLong(8, watermarkMs * 1000L) else row.setNullAt(8)
    project(row)
  }
}
