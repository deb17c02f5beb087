package streamctl.spark

import org.apache.spark.SparkThrowable

/**
 * How [[SparkStreamctlException]] is a `SparkThrowable` on Spark 4.1 and later: its condition is
 * `getCondition`, and its message template is its own message (4.1 added
 * `getDefaultMessageTemplate`; Spark's error-class registry does not know streamctl's conditions).
 */
private[streamctl] trait StreamctlThrowable extends SparkThrowable { this: Throwable =>
  def condition: String
  override def getCondition: String = condition
  override def getDefaultMessageTemplate: String = getMessage
}
