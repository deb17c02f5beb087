package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.DataWriter

/**
 * Spark 4.0 and later hand a writer its whole partition (`DataWriter.writeAll`), so the writer
 * wraps Spark's loop over the rows in `writingAll` (to end quietly when its Spark task is killed).
 */
private[spark] trait WriteAll extends DataWriter[InternalRow] {
  protected def writingAll(rows: => Unit): Unit
  override def writeAll(rows: java.util.Iterator[InternalRow]): Unit =
    writingAll(super.writeAll(rows))
}
