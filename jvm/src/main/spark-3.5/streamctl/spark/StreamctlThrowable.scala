package streamctl.spark

import org.apache.spark.SparkThrowable

/**
 * How [[SparkStreamctlException]] is a `SparkThrowable` on Spark 3.5: its condition is
 * `getErrorClass` (4.0 renamed it `getCondition`).
 */
private[streamctl] trait StreamctlThrowable extends SparkThrowable { this: Throwable =>
  def condition: String
  override def getErrorClass: String = condition
}
