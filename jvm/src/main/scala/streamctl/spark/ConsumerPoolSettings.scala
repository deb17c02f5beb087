package streamctl.spark

import org.apache.spark.SparkEnv

import streamctl.StreamctlException
import streamctl.system.ConsumerPool

/**
 * The executor's consumer pool takes its bounds from the Spark settings
 * `spark.streamctl.consumerPool.idleTimeout` (a time string, default `5min`) and
 * `spark.streamctl.consumerPool.maxConsumers` (default 128; `spark.streamctl.consumerPool.maxIdle`,
 * its name before it bounded consumers in use too, still counts), read once per JVM by its first
 * reader.
 */
private[spark] object ConsumerPoolSettings {
  val IdleTimeout = "spark.streamctl.consumerPool.idleTimeout"
  val MaxConsumers = "spark.streamctl.consumerPool.maxConsumers"
  private val MaxIdle = "spark.streamctl.consumerPool.maxIdle"

  lazy val applied: Unit = Option(SparkEnv.get).map(_.conf).foreach { conf =>
    ConsumerPool.idleTimeoutMs = conf.getTimeAsMs(IdleTimeout, s"${ConsumerPool.idleTimeoutMs}ms")
    val name = if (conf.contains(MaxConsumers)) MaxConsumers else MaxIdle
    conf.getOption(name).foreach { v =>
      ConsumerPool.maxConsumers =
        scala.util.Try(v.trim.toInt).toOption.filter(_ > 0).getOrElse(throw StreamctlException(
          s"Spark setting $name must be a positive number of consumers, not '$v'"
        ))
    }
  }
}
