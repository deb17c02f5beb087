package org.apache.spark.streamctl

import com.codahale.metrics.MetricRegistry
import org.apache.spark.SparkEnv
import org.apache.spark.metrics.source.Source

/**
 * A Dropwizard registry registered in Spark's `MetricsSystem` as a source of its own, so that the
 * sinks an operator configured (PrometheusServlet, JMX, Graphite...) export it with no new server.
 *
 * Why here: Spark's `Source` trait and `SparkEnv.metricsSystem`'s `registerSource` are
 * `private[spark]`; there is no public way to add a metrics source at runtime (plugins add theirs
 * only at start, through `spark.plugins`, before any query exists).
 *
 * {{{
 * SparkMetricsSource.register("streamctl", registry) // then registry.register("query.q1.lag", gauge)
 * }}}
 */
object SparkMetricsSource {

  /**
   * Registers `registry` as source `name` of the current SparkEnv's metrics system; metrics added
   * to or removed from `registry` later are added to or removed from the export too (Dropwizard
   * follows a child registry).
   */
  def register(name: String, registry: MetricRegistry): Unit =
    Option(SparkEnv.get).foreach(_.metricsSystem.registerSource(new Registered(name, registry)))

  private final class Registered(name: String, registry: MetricRegistry) extends Source {
    override def sourceName: String = name
    override def metricRegistry: MetricRegistry = registry
  }
}
