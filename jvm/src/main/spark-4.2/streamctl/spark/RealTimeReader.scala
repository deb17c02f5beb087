package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus

/**
 * Spark 4.2: a real-time reader answers `nextWithTimeout(startTimeMs, timeoutMs)` only (4.1 had
 * `nextWithTimeout(timeoutMs)` alone; 4.3 has both). [[TaskPartitionReader]] implements
 * [[readWithin]] once; each Spark line's copy of this file adapts it.
 */
abstract class RealTimeReader extends SupportsRealTimeRead[InternalRow] {
  type Status = RecordStatus

  /** Waits up to `timeoutMs` for the next row ([[get]]); one of [[noRecord]] or [[record]]. */
  protected def readWithin(timeoutMs: Long): Status

  protected final def noRecord: Status = RecordStatus.newStatusWithoutArrivalTime(false)

  /** A row was read; `arrivalMs` is its Kafka timestamp, negative when it has none. */
  protected final def record(arrivalMs: Long): Status =
    if (arrivalMs >= 0) RecordStatus.newStatusWithArrivalTimeMs(arrivalMs) else RecordStatus.newStatusWithoutArrivalTime(true)

  override def nextWithTimeout(startTimeMs: java.lang.Long, timeoutMs: java.lang.Long): RecordStatus = readWithin(timeoutMs)
}
