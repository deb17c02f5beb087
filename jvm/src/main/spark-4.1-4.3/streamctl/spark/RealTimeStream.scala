package streamctl.spark

import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode

/** Spark 4.1 and later: the source takes part in real-time mode (`trigger(realTime=...)`). */
trait RealTimeStream extends SupportsRealTimeMode
