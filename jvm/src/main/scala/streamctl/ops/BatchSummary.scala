package streamctl
package ops

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.node.ObjectNode

import streamctl.Json
import streamctl.control.ControlMetric
import streamctl.plan.SourcePosition
import streamctl.startpoint.AppliedStartpoints
import streamctl.system.{SSP, TimeLag}

/**
 * What streamctl decided in one batch of one source, from what the query's progress report holds
 * (start and end offsets, the broker's heads, the source's metrics): records admitted per stream,
 * lag per SSP, the query's own event-time watermark, the upstream watermark and end-of-stream of
 * its intermediate streams, the startpoints the batch applied and the tasks host affinity moved. It
 * is both the driver's one INFO line per batch ([[line]]) and an entry of the bounded progress
 * history `streamctl report` draws ([[ProgressHistory]]).
 *
 * {{{
 * val s = BatchSummary.of(batchId = 7, timestampMs, start, end, heads, ownWatermarkMs = None, metrics)
 * s.line  // "batch 7: admitted orders=500 rates=20; lag max 1200; upstream watermark 2024-05-01T10:00:00Z; ..."
 * }}}
 */
final case class BatchSummary(
    batchId: Long,
    timestampMs: Long,
    admitted: Map[String, Long],
    lag: Map[SSP, Long],
    ownWatermarkMs: Option[Long],
    upstreamWatermarkMs: Option[Long],
    endOfStream: Boolean,
    startpoints: Seq[String],
    tasksMoved: Int,
    /** The intermediate SSPs (`orders-0`) whose producers have all sent end-of-stream. */
    ended: Seq[String] = Nil,
    /**
     * Where the batch ended per SSP (the least position of the tasks reading it); not kept in the
     * history.
     */
    positions: Map[SSP, Long] = Map.empty,
    /** Per SSP, seconds behind ([[streamctl.system.TimeLag]]), where known; not kept. */
    secondsBehind: Map[SSP, Long] = Map.empty,
    /**
     * Per SSP, the newest record time (epoch ms) the query processed, where known: kept in the
     * history, where `streamctl describe` finds it.
     */
    lastRecordMs: Map[SSP, Long] = Map.empty,
    /** Per SSP, records skipped as gone since the checkpoint began, where any were; not kept. */
    recordsSkipped: Map[SSP, Long] = Map.empty
) {

  /** The concise log line: only what streamctl decided, nothing about Spark's own work. */
  def line: String = {
    val parts = Seq(
      Some(s"admitted ${if (admitted.isEmpty) "nothing"
        else admitted.toSeq.sorted.map { case (s, n) => s"$s=$n" }.mkString(" ")}"),
      Some(if (lag.isEmpty) "lag unknown" else s"lag max ${lag.values.max}"),
      ownWatermarkMs.map(w => s"watermark ${java.time.Instant.ofEpochMilli(w)}"),
      upstreamWatermarkMs.map(w => s"upstream watermark ${java.time.Instant.ofEpochMilli(w)}"),
      if (endOfStream) Some("end-of-stream")
      else if (ended.nonEmpty) Some(s"ended: ${ended.mkString(", ")}") else None,
      if (startpoints.isEmpty) None
      else Some(s"startpoints applied: ${startpoints.mkString(", ")}"),
      if (tasksMoved > 0) Some(s"$tasksMoved task(s) moved") else None
    ).flatten
    s"batch $batchId: ${parts.mkString("; ")}"
  }

  def toJson: ObjectNode = {
    val n = Json.obj()
    n.put("batch", batchId).put("timeMs", timestampMs)
    val a = n.putObject("admitted")
    admitted.toSeq.sorted.foreach { case (s, c) => a.put(s, c) }
    val l = n.putObject("lag")
    lag.toSeq.sorted.foreach { case (ssp, c) => l.put(ssp.key, c) }
    ownWatermarkMs.fold(n.putNull("watermarkMs"))(n.put("watermarkMs", _))
    upstreamWatermarkMs.fold(n.putNull("upstreamWatermarkMs"))(n.put("upstreamWatermarkMs", _))
    n.put("endOfStream", endOfStream)
    val e = n.putArray("ended")
    ended.foreach(e.add)
    val sp = n.putArray("startpoints")
    startpoints.foreach(sp.add)
    n.put("tasksMoved", tasksMoved)
    n
  }
}

object BatchSummary {

  /**
   * @param start
   *   the batch's start offset (None for the first batch of a query)
   * @param heads
   *   the broker's head per SSP as the planner last saw them (progress `latestOffset`)
   * @param metrics
   *   the source's progress metrics (`admitted`, `watermark`, `endOfStream`, `tasksMoved`); without
   *   `admitted`, what each stream admitted is taken from the positions
   */
  def of(
      batchId: Long,
      timestampMs: Long,
      start: Option[SourcePosition],
      end: SourcePosition,
      heads: Map[SSP, Long],
      ownWatermarkMs: Option[Long],
      metrics: Map[String, String]
  ): BatchSummary = {
    val reported = metrics.get("admitted").map(Json.parse(_, "metric 'admitted'"))
      .map(_.properties().asScala.map(e => e.getKey -> e.getValue.asLong).toMap)
    val admitted = reported.getOrElse(end.tasks.toSeq.flatMap { case (task, ps) =>
      ps.map { case (ssp, until) =>
        val from = start.flatMap(s => end.startOf(s, task, ssp)).orElse(end.starts.get(
          task
        ).flatMap(_.get(ssp))).getOrElse(until)
        ssp.stream -> math.max(0L, until - from)
      }
    }.groupMapReduce(_._1)(_._2)(_ + _))
    val lag = TimeLag.recordsBehind(heads, end.minPositions)
    val applied = end.state(AppliedStartpoints.Codec).applied.toSeq.sortBy(_._1._1).map {
      case ((ssp, task), r) =>
        s"$ssp (${task.name}) ${r.startpoint.describe} -> offset ${r.offset}"
    }
    BatchSummary(
      batchId,
      timestampMs,
      admitted,
      lag,
      ownWatermarkMs,
      metrics.get("watermark").flatMap(_.toLongOption),
      metrics.get("endOfStream").contains("true"),
      applied,
      metrics.get("tasksMoved").flatMap(_.toIntOption).getOrElse(0),
      ended(metrics.get(ControlMetric.Name)),
      end.minPositions,
      bySsp(metrics.get("secondsBehind"), "secondsBehind", end),
      bySsp(metrics.get("lastRecordTimeMs"), "lastRecordTimeMs", end),
      bySsp(metrics.get("recordsSkippedBySsp"), "recordsSkippedBySsp", end)
    )
  }

  // A metric with a number per SSP of the source ([[streamctl.system.SspValues.byName]]).
  private def bySsp(json: Option[String], name: String, end: SourcePosition): Map[SSP, Long] =
    json.fold(Map.empty[SSP, Long]) { text =>
      val byName = end.ssps.iterator.map(s => s.toString -> s).toMap
      Json.parse(text, s"metric '$name'").properties().asScala.flatMap(e =>
        byName.get(e.getKey).map(_ -> e.getValue.asLong)
      ).toMap
    }

  private def ended(control: Option[String]): Seq[String] =
    control.toSeq.flatMap(ControlMetric.read).collect { case (ssp, f) if f.ended => ssp }.sorted
}
