package org.apache.spark.streamctl

import org.apache.spark.sql.catalyst.plans.logical.EventTimeWatermark
import org.apache.spark.sql.execution.SQLExecution
import org.apache.spark.sql.execution.datasources.v2.V2TableWriteExec
import org.apache.spark.sql.execution.metric.SQLMetrics
import org.apache.spark.sql.streaming.StreamingQuery

/**
 * The event-time watermark Spark applies in the batch a query is running, and whether the query has
 * one at all: internal values.
 *
 * Why: Spark publishes a query's watermark only in its progress reports, and the report of a batch
 * appears after the batch commits. A sink that sends the watermark downstream when its batch's
 * writers commit would otherwise send the previous batch's value, one trigger interval late on
 * every hop. The running batch's value sits in the query's current `IncrementalExecution`; neither
 * class is public API, hence this package. Any failure to read it ([[SparkInternals]]: a Spark
 * whose internals moved) yields None, and callers fall back to progress.
 *
 * {{{
 * SparkQueries.batchWatermarkMs(query, batchId = 7) // Some(1700000000000L) while batch 7 runs
 * }}}
 */
object SparkQueries {

  /**
   * The watermark of batch `batchId` while `query` runs it; None elsewhere, or when not readable.
   */
  def batchWatermarkMs(query: StreamingQuery, batchId: Long): Option[Long] = SparkInternals.read {
    runningBatch(query, batchId).map(_.offsetSeqMetadata.batchWatermarkMs)
  }

  /**
   * Whether the query's plan has an event-time watermark (`withWatermark`); None when not readable.
   * Before its first progress report, the plan is the only way to know that a query has no
   * watermark of its own: a real-time query's first report comes only after its first batch,
   * minutes later, and its sink sends watermarks before that.
   */
  def hasEventTimeWatermark(query: StreamingQuery): Option[Boolean] = SparkInternals.read {
    execution(query).map(_.logicalPlan.exists(_.isInstanceOf[EventTimeWatermark]))
  }

  /**
   * How many streaming sources `query` reads; None when not readable. Progress reports list them,
   * but a query restarted with nothing new to read reports no progress, only idleness, and the
   * end-of-stream stopper must still know that streamctl's sources are all of them.
   */
  def streamingSources(query: StreamingQuery): Option[Int] = SparkInternals.read {
    execution(query).map(_.logicalPlan.collectLeaves().count(_.isStreaming))
  }

  /**
   * How `query` is triggered: a sink's checks at start (a transactional sink's timeout against the
   * trigger interval; real-time mode) need it, and it is only in the engine. None when not
   * readable.
   */
  def trigger(query: StreamingQuery): Option[QueryTrigger] =
    SparkInternals.read(StreamExecutions.trigger(query))

  /**
   * Whether `query` writes its offset and commit logs in the background (Spark's asynchronous
   * progress tracking): it then plans a batch before the ones before it are logged, and may log
   * only some of them. None when not readable. Only the engine knows: the option that asks for it
   * is the sink's, and Spark 4.3 chooses it by itself for some real-time queries.
   */
  def logsInBackground(query: StreamingQuery): Option[Boolean] =
    SparkInternals.read(StreamExecutions.logsInBackground(query))

  /**
   * Sets the write node's custom metric `name` of batch `batchId`, which `query` is running, to
   * `value` and posts it to the SQL tab, as Spark posts a batch write's driver metrics. Why
   * internal: a streaming write's driver-side figures (an intermediate sink's control messages,
   * sent after the writers committed) have no public way there: Spark calls
   * `Write.reportDriverMetrics` only for batch writes, and the node's metric sits in the batch's
   * executed plan. Called on the query's thread, inside the batch's SQL execution. Does nothing
   * when not readable.
   */
  def postWriteMetric(query: StreamingQuery, batchId: Long, name: String, value: Long): Unit =
    SparkInternals.read {
      for {
        batch <- runningBatch(query, batchId)
        metric <- batch.executedPlan.collectFirst {
          // The node's metrics are its write's custom metrics, by name.
          case w: V2TableWriteExec if w.metrics.contains(name) => w.metrics(name)
        }
        sc = batch.sparkSession.sparkContext
        executionId <- Option(sc.getLocalProperty(SQLExecution.EXECUTION_ID_KEY))
      } yield {
        metric.set(value)
        SQLMetrics.postDriverMetricUpdates(sc, executionId, Seq(metric))
      }
    }

  /** The execution of batch `batchId` while `query` runs it. */
  private def runningBatch(query: StreamingQuery, batchId: Long) =
    execution(query).flatMap(e => Option(e.lastExecution)).filter(_.currentBatchId == batchId)

  /** The engine behind a query handle (the adapters of this package read internals from it). */
  private[streamctl] def execution(query: StreamingQuery) = StreamExecutions.of(query)
}

/** A query's trigger, as a sink sees it ([[SparkQueries.trigger]]). */
sealed trait QueryTrigger

object QueryTrigger {

  /** `trigger(processingTime=...)`; 0 for as fast as possible. */
  final case class Every(intervalMs: Long) extends QueryTrigger

  /**
   * `trigger(realTime=...)`: one long batch per `batchDurationMs`, records written as they come.
   */
  final case class RealTime(batchDurationMs: Long) extends QueryTrigger
  case object Other extends QueryTrigger
}
