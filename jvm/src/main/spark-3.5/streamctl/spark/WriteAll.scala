package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.DataWriter

/**
 * Spark 3.5 calls `write` once per row and has no `writeAll`: `writingAll` is never called, so a
 * writer whose Spark task is killed mid-write fails it as Spark sees fit (an ERROR "Aborting task"
 * in the log; nothing is committed either way).
 */
private[spark] trait WriteAll extends DataWriter[InternalRow] {
  protected def writingAll(rows: => Unit): Unit
}
