package streamctl.spark

import org.apache.spark.SparkEnv

import streamctl.system.ConsumerPool

/**
 * The executor's consumer pool takes its bounds from the Spark settings
 * `spark.streamctl.consumerPool.idleTimeout` (a time string, default `5min`) and
 * `spark.streamctl.consumerPool.maxIdle` (default 10000), read once per JVM by its first reader.
 */
private[spark] object ConsumerPoolSettings {
  val IdleTimeout = "spark.streamctl.consumerPool.idleTimeout"
  val MaxIdle = "spark.streamctl.consumerPool.maxIdle"

  lazy val applied: Unit = Option(SparkEnv.get).map(_.conf).foreach { conf =>
    ConsumerPool.idleTimeoutMs = conf.getTimeAsMs(IdleTimeout, s"${ConsumerPool.idleTimeoutMs}ms")
    ConsumerPool.maxIdle = conf.getInt(MaxIdle, ConsumerPool.maxIdle)
  }
}
