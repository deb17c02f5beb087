package streamctl.spark

import org.apache.spark.SparkEnv

import streamctl.system.{ConsumerPool, ConsumerPoolSettings}

/**
 * The executor's consumer pool takes its [[ConsumerPoolSettings]] from the executor's SparkConf,
 * once per JVM, when its first reader starts; the idle timeout by Spark's own rule for time strings
 * (`getTimeAsMs`: a bare number is milliseconds), as Spark's own settings are read.
 */
private[spark] object ExecutorConsumerPool {
  lazy val configured: Unit = Option(SparkEnv.get).map(_.conf).foreach { conf =>
    ConsumerPool.idleTimeoutMs =
      conf.getTimeAsMs(ConsumerPoolSettings.IdleTimeout, s"${ConsumerPool.idleTimeoutMs}ms")
    ConsumerPoolSettings.bounds(conf.getOption)
  }
}
