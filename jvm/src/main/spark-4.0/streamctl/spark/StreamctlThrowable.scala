package streamctl.spark

import org.apache.spark.SparkThrowable

/**
 * How [[SparkStreamctlException]] is a `SparkThrowable` on Spark 4.0: its condition is
 * `getCondition` (4.0 has no `getDefaultMessageTemplate`, which 4.1 added).
 */
private[streamctl] trait StreamctlThrowable extends SparkThrowable { this: Throwable =>
  def condition: String
  override def getCondition: String = condition
}
