package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus

/**
 * Spark 4.3: both forms of `nextWithTimeout` are defaults that call each other, so both are
 * overridden. [[TaskPartitionReader]] implements `readWithin` once ([[RealTimeRecords]]); each
 * Spark line's copy of this file adapts it.
 */
abstract class RealTimeReader extends SupportsRealTimeRead[InternalRow] with RealTimeRecords {
  override def nextWithTimeout(timeoutMs: java.lang.Long): RecordStatus = readWithin(timeoutMs)
  override def nextWithTimeout(
      startTimeMs: java.lang.Long,
      timeoutMs: java.lang.Long
  ): RecordStatus = readWithin(timeoutMs)
}
