package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.connector.read.streaming.PartitionOffset

/**
 * Spark 3.5 and 4.0 have no real-time mode (it came in 4.1): a plain micro-batch reader. Spark
 * never calls [[readWithin]] or [[getOffset]] here; `trigger(realTime=...)` does not exist in these
 * lines, and the source refuses real-time mode by name ([[RealTimeStream]]).
 */
abstract class RealTimeReader extends PartitionReader[InternalRow] {
  type Status = Unit

  protected def readWithin(timeoutMs: Long): Status

  def getOffset: PartitionOffset

  protected final def noRecord: Status = ()

  protected final def record(arrivalMs: Long): Status = ()
}
