package streamctl
package spark

import java.time.Instant
import java.util.UUID

import scala.util.Try

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryProgress}
import org.apache.spark.streamctl.SparkQueries

/**
 * The few facts about the running query that the DataSource V2 API does not hand a source or sink,
 * taken from public APIs: which query the current driver thread runs (Spark sets the query id as a
 * local property of its query thread), the query object itself, and its event-time watermark (only
 * published in progress reports).
 *
 * {{{
 * QueryLookup.currentQueryId          // Some("5f0c...") on a query's thread, None elsewhere
 * QueryLookup.find(id).map(_.name)
 * }}}
 */
object QueryLookup {
  /* StreamExecution.QUERY_ID_KEY; the class is internal, the property value is stable since Spark
   * 2. */
  private val QueryIdProperty = "sql.streaming.queryId"

  // MicroBatchExecution.BATCH_ID_KEY, set on the query thread before each batch runs.
  private val BatchIdProperty = "streaming.sql.batchId"

  def currentQueryId: Option[String] = localProperty(QueryIdProperty)

  /** The query the current driver thread runs, when that thread is a query's. */
  def current: Option[StreamingQuery] = currentQueryId.flatMap(find)

  def currentBatchId: Option[Long] = localProperty(BatchIdProperty).flatMap(_.toLongOption)

  /* Local properties are per thread; the session only leads to the SparkContext (never creates
   * one). */
  private def localProperty(name: String): Option[String] =
    (SparkSession.getActiveSession.toSeq ++ SparkSession.getDefaultSession.toSeq).headOption
      .flatMap(s => Option(s.sparkContext.getLocalProperty(name)))

  /**
   * The query with this id, from whichever session runs it: the active one, the default one, or one
   * that streamctl is used in ([[QueryListeners]]; under Spark Connect each client has its own).
   */
  def find(id: String): Option[StreamingQuery] = {
    val uuid = Try(UUID.fromString(id)).toOption
    val sessions =
      (SparkSession.getActiveSession.toSeq ++ SparkSession.getDefaultSession.toSeq).iterator.map(
        _.streams
      )
    val managers = sessions ++ QueryListeners.knownManagers.iterator
    uuid.flatMap(u =>
      managers.flatMap[StreamingQuery](m => Try(m.get(u)).toOption.filter(_ != null)).nextOption()
    )
  }

  /**
   * The query's event-time watermark: `None` when the query has no `withWatermark` (its progress
   * reports carry none), `Some(None)` while it is not known yet (no report and no watermark
   * applied, or Spark's initial 0), `Some(Some(ms))` otherwise. While batch `running` runs, the
   * value Spark applies in it ([[org.apache.spark.streamctl.SparkQueries]]); else the latest
   * report's, which lags by a batch (on the safe side for a watermark).
   */
  def sparkWatermark(query: StreamingQuery, running: Option[Long] = None): Option[Option[Long]] =
    Option(query.lastProgress) match {
      // No report yet (a run's first batch): a watermark Spark applies proves there is one,
      // restored from the checkpoint after a restart; else it is not known yet.
      case None =>
        if (SparkQueries.hasEventTimeWatermark(query).contains(false)) None
        else Some(running.flatMap(SparkQueries.batchWatermarkMs(query, _)).filter(_ > 0))
      case Some(p) =>
        Option(p.eventTime).flatMap(m => Option(m.get("watermark"))).map { _ =>
          val current = running.flatMap(SparkQueries.batchWatermarkMs(query, _)).filter(_ > 0)
          (reportedWatermarkMs(p) ++ current).maxOption
        }
    }

  /**
   * The event-time watermark a progress report carries, in epoch ms; None when it carries none or
   * Spark's initial 0.
   */
  def reportedWatermarkMs(p: StreamingQueryProgress): Option[Long] =
    Option(p.eventTime).flatMap(m => Option(m.get("watermark")))
      .flatMap(text => Try(Instant.parse(text).toEpochMilli).toOption).filter(_ > 0)
}
