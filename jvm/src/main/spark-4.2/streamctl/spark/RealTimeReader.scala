package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus

/**
 * Spark 4.2: a real-time reader answers `nextWithTimeout(startTimeMs, timeoutMs)` only (4.1 had
 * `nextWithTimeout(timeoutMs)` alone; 4.3 has both). [[TaskPartitionReader]] implements
 * `readWithin` once ([[RealTimeRecords]]); each Spark line's copy of this file adapts it.
 */
abstract class RealTimeReader extends SupportsRealTimeRead[InternalRow] with RealTimeRecords {
  override def nextWithTimeout(
      startTimeMs: java.lang.Long,
      timeoutMs: java.lang.Long
  ): RecordStatus = readWithin(timeoutMs)
}
