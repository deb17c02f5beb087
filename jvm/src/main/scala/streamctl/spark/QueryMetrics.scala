package streamctl
package spark

import scala.collection.mutable

import com.codahale.metrics.{Gauge, MetricRegistry}
import org.apache.spark.SparkEnv
import org.apache.spark.streamctl.SparkMetricsSource

import streamctl.control.ControlMetric
import streamctl.ops.BatchSummary
import streamctl.system.SSP

/**
 * Each running query's lag and control health as gauges of one source, `streamctl`, in Spark's
 * metrics system, so that the sinks an operator configured (PrometheusServlet, JMX...) export them
 * ([[SparkMetricsSource]]). Fed once per batch from what the batch's progress report already holds
 * (the same figures as `streamctl describe` and the progress history: [[BatchSummary]]'s lag, the
 * source's `recordsSkipped` and `control` metrics); a query's gauges go when it terminates. Names
 * (dots replaced by `_` inside a query or stream name), under `<namespace>.driver.streamctl.`:
 *
 *   - `query.<q>.topic.<stream>.partition.<p>.recordsBehind`, `...secondsBehind` (where known,
 *     [[streamctl.system.TimeLag]]), `...recordsSkipped`
 *   - `query.<q>.recordsSkipped`, `query.<q>.upstreamWatermarkMs`, `query.<q>.endOfStream`
 *   - per intermediate SSP: `query.<q>.topic.<stream>.partition.<p>.` + `watermarkMs`,
 *     `watermarkLagSeconds`, `producersExpected`, `producersIdle`, `endOfStream`
 *
 * `<q>` is the query's name, or its id when it has none. Off with `spark.streamctl.metrics.enabled
 * = false`.
 *
 * {{{
 * QueryMetrics.update(queryId, Some("orders-etl"), Seq(("streamctl[orders]#0", Some(summary), sourceProgress.metrics)))
 * QueryMetrics.remove(queryId) // the query terminated
 * }}}
 */
object QueryMetrics {
  val EnabledConf = "spark.streamctl.metrics.enabled"
  val SourceName = "streamctl"
  private val log = org.slf4j.LoggerFactory.getLogger(getClass.getName.stripSuffix("$"))

  /** A gauge set once per batch; read by whatever sink polls. */
  private final class Value extends Gauge[Long] {
    @volatile var value = 0L
    override def getValue: Long = value
  }

  // Seconds between a watermark (epoch ms) and now, at the moment a sink reads it.
  private final class LagSeconds(watermark: Value) extends Gauge[Long] {
    override def getValue: Long =
      if (watermark.value <= 0) 0L else (System.currentTimeMillis() - watermark.value) / 1000L
  }

  // The registry registered in the current SparkEnv (a new SparkContext gets a new one).
  private var registered: Option[(SparkEnv, MetricRegistry)] = None
  private val byQuery = mutable.HashMap.empty[String, mutable.HashMap[String, Gauge[Long]]]
  // Per query, the start of its gauges' names (prefixOf), fixed at its first report.
  private val prefixes = mutable.HashMap.empty[String, String]
  /* Per query, each streamctl source's latest summary, by the source's key: a batch summarizes only
   * the sources that read something, and the others' figures still stand. */
  private val latest = mutable.HashMap.empty[String, mutable.LinkedHashMap[String, BatchSummary]]

  def enabled: Boolean = Option(SparkEnv.get).exists(_.conf.getBoolean(EnabledConf, true))

  /**
   * Sets the gauges of query `queryId` from a progress report: per streamctl source of the query, a
   * key naming it in the query, its batch summary (None when it read nothing: its last one stands)
   * and its progress metrics; `sources`: how many sources the query has, streamctl's or not.
   */
  def update(
      queryId: String,
      queryName: Option[String],
      reported: Seq[(String, Option[BatchSummary], Map[String, String])],
      sources: Int
  ): Unit = if (reported.exists(_._2.isDefined) && enabled) synchronized {
    registry().foreach { r =>
      val known = latest.getOrElseUpdate(queryId, mutable.LinkedHashMap.empty)
      reported.foreach { case (key, summary, _) => summary.foreach(known.update(key, _)) }
      val sources = reported.flatMap { case (key, _, metrics) => known.get(key).map(_ -> metrics) }
      val q = prefixes.getOrElseUpdate(queryId, prefixOf(queryId, queryName))
      val gauges = byQuery.getOrElseUpdate(queryId, mutable.HashMap.empty)
      val touched = mutable.HashSet.empty[String]
      def add(name: String, g: => Gauge[Long]): Gauge[Long] = {
        touched += name
        gauges.getOrElseUpdate(name, r.register(name, g))
      }
      def set(name: String, v: Long): Value = add(name, new Value) match {
        case g: Value => g.value = v; g
        case other => throw new IllegalStateException(s"Gauge $name is $other")
      }
      def ssp(s: SSP) = s"$q.topic.${part(s.stream)}.partition.${s.partition}"
      set(
        s"$q.recordsSkipped",
        reported.flatMap(_._3.get("recordsSkipped")).flatMap(_.toLongOption).sum
      )
      /* The query's figures over every source with intermediate streams, from their metrics (a
       * source that read nothing has no summary, but its metrics): the lowest upstream watermark,
       * once each has one, and end-of-stream only when every one is there and the query has no
       * other source (the stopper's rule: plain streams never end), not whichever source came last. */
      val controlled = reported.map(_._3).filter(_.contains(ControlMetric.Name))
      if (controlled.nonEmpty) {
        val ended =
          controlled.size == sources && controlled.forall(_.get("endOfStream").contains("true"))
        set(s"$q.endOfStream", if (ended) 1 else 0)
        val watermarks = controlled.flatMap(_.get("watermark").flatMap(_.toLongOption))
        if (watermarks.size == controlled.size) set(s"$q.upstreamWatermarkMs", watermarks.min)
      }
      sources.foreach { case (summary, metrics) =>
        summary.lag.foreach { case (s, behind) => set(s"${ssp(s)}.recordsBehind", behind) }
        summary.secondsBehind.foreach { case (s, b) => set(s"${ssp(s)}.secondsBehind", b) }
        summary.lag.keys.foreach(s =>
          set(s"${ssp(s)}.recordsSkipped", summary.recordsSkipped.getOrElse(s, 0L))
        )
        val control = metrics.get(ControlMetric.Name)
        val byName = summary.positions.keys.map(s => s.toString -> s).toMap
        control.toSeq.flatMap(ControlMetric.read).foreach { case (name, c) =>
          byName.get(name).foreach { s =>
            val prefix = ssp(s)
            set(s"$prefix.producersExpected", c.producerCount)
            set(s"$prefix.producersIdle", c.idle)
            set(s"$prefix.endOfStream", if (c.ended) 1 else 0)
            c.watermarkMs.foreach { w =>
              val watermark = set(s"$prefix.watermarkMs", w)
              add(s"$prefix.watermarkLagSeconds", new LagSeconds(watermark))
            }
          }
        }
      }
      // A figure this batch does not have (not known now, a partition no longer read) is gone, as
      // docs/operations.md says, rather than left at its last value.
      gauges.keys.filterNot(touched).toList.foreach { name =>
        r.remove(name)
        gauges.remove(name)
      }
    }
  }

  /**
   * A query's gauges are under its name; a name another running query's gauges use already (the
   * same name in another session, or `a.b` beside `a_b`) gets the query id after it, as the metrics
   * system cannot hold one name twice.
   */
  private def prefixOf(queryId: String, queryName: Option[String]): String = {
    val named = s"query.${part(queryName.getOrElse(queryId))}"
    if (!prefixes.valuesIterator.contains(named)) named
    else {
      val own = s"${named}_$queryId"
      log.warn(
        s"Another running query's gauges are named '$named' already: those of query $queryId are under '$own'"
      )
      own
    }
  }

  /** Removes the gauges of query `queryId` (it terminated). */
  def remove(queryId: String): Unit = synchronized {
    prefixes.remove(queryId)
    latest.remove(queryId)
    byQuery.remove(queryId).foreach { gauges =>
      registered.foreach { case (_, r) => gauges.keys.foreach(r.remove) }
    }
  }

  private def registry(): Option[MetricRegistry] = Option(SparkEnv.get).flatMap { env =>
    registered match {
      case Some((e, r)) if e eq env => Some(r)
      case _ =>
        byQuery.clear()
        latest.clear()
        prefixes.clear()
        val r = new MetricRegistry
        SparkMetricsSource.register(SourceName, r)
        registered = Some(env -> r)
        Some(r)
    }
  }

  // A query or stream name as one part of a dotted metric name.
  private def part(name: String): String = name.replace('.', '_')
}
