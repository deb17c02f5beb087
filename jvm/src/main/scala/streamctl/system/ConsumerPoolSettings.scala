package streamctl.system

import streamctl.config.Parsers

/**
 * The Spark settings that bound the executor's [[ConsumerPool]]:
 * `spark.streamctl.consumerPool.idleTimeout` (a time string, default `5min`),
 * `spark.streamctl.consumerPool.maxMetadataPartitions` (default: what 5% of the heap holds) and
 * `spark.streamctl.consumerPool.maxConsumers` (default: eight for each reader the executor has had
 * at once, at most 10000, fewer under a low open-file limit;
 * `spark.streamctl.consumerPool.maxIdle`, its name before it bounded consumers in use too, still
 * counts). Read once per JVM by its first reader (`spark.ExecutorConsumerPool`).
 *
 * {{{
 * ConsumerPoolSettings.bounds(Map(ConsumerPoolSettings.MaxConsumers -> "40").get)
 * assert(ConsumerPool.maxConsumers == Some(40))
 * }}}
 */
object ConsumerPoolSettings {
  val IdleTimeout = "spark.streamctl.consumerPool.idleTimeout"
  val MaxConsumers = "spark.streamctl.consumerPool.maxConsumers"
  val MaxMetadataPartitions = "spark.streamctl.consumerPool.maxMetadataPartitions"
  private val MaxIdle = "spark.streamctl.consumerPool.maxIdle"

  /**
   * Sets the pool's bounds from the settings `setting` finds; a bound that is not a positive number
   * names its setting.
   */
  def bounds(setting: String => Option[String]): Unit = {
    val count = setting(MaxConsumers).map(MaxConsumers -> _)
      .orElse(setting(MaxIdle).map(MaxIdle -> _))
    count.foreach { case (name, v) =>
      ConsumerPool.maxConsumers = Some(Parsers.positiveInt(name, v))
    }
    setting(MaxMetadataPartitions).foreach(v =>
      ConsumerPool.maxMetadataPartitions = Parsers.positiveLong(MaxMetadataPartitions, v)
    )
  }
}
