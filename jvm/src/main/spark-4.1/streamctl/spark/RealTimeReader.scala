package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus

/**
 * Spark 4.1: real-time mode's first release; a real-time reader answers
 * `nextWithTimeout(timeoutMs)` only (4.2 added a start time). [[TaskPartitionReader]] implements
 * `readWithin` once ([[RealTimeRecords]]); each Spark line's copy of this file adapts it.
 */
abstract class RealTimeReader extends SupportsRealTimeRead[InternalRow] with RealTimeRecords {
  override def nextWithTimeout(timeoutMs: java.lang.Long): RecordStatus = readWithin(timeoutMs)
}
