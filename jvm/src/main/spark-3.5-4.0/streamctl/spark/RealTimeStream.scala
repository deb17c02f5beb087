package streamctl.spark

import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.connector.read.streaming.{Offset, PartitionOffset}

/**
 * Spark 3.5 and 4.0 have no real-time mode (it came in 4.1): the methods that Spark 4.1's
 * `SupportsRealTimeMode` declares, which nothing calls here.
 */
trait RealTimeStream {
  def prepareForRealTimeMode(): Unit = ()
  def planInputPartitions(start: Offset): Array[InputPartition]
  def mergeOffsets(offsets: Array[PartitionOffset]): Offset
}
