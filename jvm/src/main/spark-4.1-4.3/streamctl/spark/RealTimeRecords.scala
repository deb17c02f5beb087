package streamctl.spark

import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus

/**
 * Spark 4.1 and later: what a real-time read answers, in Spark's `RecordStatus`. Each line's
 * [[RealTimeReader]] adds the `nextWithTimeout` form(s) that line calls.
 */
private[spark] trait RealTimeRecords {
  type Status = RecordStatus

  /** Waits up to `timeoutMs` for the next row; one of [[noRecord]] or [[record]]. */
  protected def readWithin(timeoutMs: Long): Status

  protected final def noRecord: Status = RecordStatus.newStatusWithoutArrivalTime(false)

  /** A row was read; `arrivalMs` is its Kafka timestamp, negative when it has none. */
  protected final def record(arrivalMs: Long): Status =
    if (arrivalMs >= 0) RecordStatus.newStatusWithArrivalTimeMs(arrivalMs)
    else RecordStatus.newStatusWithoutArrivalTime(true)
}
