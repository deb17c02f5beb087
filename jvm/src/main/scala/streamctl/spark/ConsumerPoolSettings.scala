package streamctl.spark

import org.apache.spark.{SparkConf, SparkEnv}

import streamctl.StreamctlException
import streamctl.system.ConsumerPool

/**
 * The executor's consumer pool takes its bounds from the Spark settings
 * `spark.streamctl.consumerPool.idleTimeout` (a time string, default `5min`),
 * `spark.streamctl.consumerPool.maxMetadataPartitions` (default: what 5% of the heap holds) and
 * `spark.streamctl.consumerPool.maxConsumers` (default: eight for each reader the executor has had
 * at once, at most 10000, fewer under a low open-file limit;
 * `spark.streamctl.consumerPool.maxIdle`, its name before it bounded consumers in use too, still
 * counts), read once per JVM by its first reader.
 */
private[spark] object ConsumerPoolSettings {
  val IdleTimeout = "spark.streamctl.consumerPool.idleTimeout"
  val MaxConsumers = "spark.streamctl.consumerPool.maxConsumers"
  val MaxMetadataPartitions = "spark.streamctl.consumerPool.maxMetadataPartitions"
  private val MaxIdle = "spark.streamctl.consumerPool.maxIdle"

  lazy val applied: Unit = Option(SparkEnv.get).map(_.conf).foreach(apply)

  private def apply(conf: SparkConf): Unit = {
    ConsumerPool.idleTimeoutMs = conf.getTimeAsMs(IdleTimeout, s"${ConsumerPool.idleTimeoutMs}ms")
    bounds(conf.getOption)
  }

  /**
   * Sets the pool's bounds from the settings `setting` finds; a bound that is not a positive number
   * names its setting.
   */
  def bounds(setting: String => Option[String]): Unit = {
    val count = setting(MaxConsumers).map(MaxConsumers -> _)
      .orElse(setting(MaxIdle).map(MaxIdle -> _))
    count.foreach { case (name, v) => ConsumerPool.maxConsumers = Some(positive(name, v).toInt) }
    setting(MaxMetadataPartitions).foreach(v =>
      ConsumerPool.maxMetadataPartitions = positive(MaxMetadataPartitions, v)
    )
  }

  private def positive(name: String, v: String): Long =
    scala.util.Try(v.trim.toLong).toOption.filter(n => n > 0 && n <= Int.MaxValue).getOrElse(
      throw StreamctlException(s"Spark setting $name must be a positive whole number, not '$v'")
    )
}
