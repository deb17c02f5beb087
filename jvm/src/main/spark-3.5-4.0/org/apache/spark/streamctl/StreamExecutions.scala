package org.apache.spark.streamctl

import org.apache.spark.sql.execution.streaming.{
  AsyncProgressTrackingMicroBatchExecution,
  ProcessingTimeTrigger,
  StreamExecution,
  StreamingQueryWrapper
}
import org.apache.spark.sql.streaming.StreamingQuery

/**
 * The engine behind a query handle. Up to Spark 4.0, `StreamExecution` and `StreamingQueryWrapper`
 * are in package `execution.streaming` (4.1 moved them to `runtime`); this file is where that is
 * known ([[SparkQueries]] and [[SparkQuerySink]] read internals from what it returns).
 */
private[streamctl] object StreamExecutions {
  def of(query: StreamingQuery): Option[StreamExecution] = query match {
    case w: StreamingQueryWrapper => Option(w.streamingQuery)
    case s: StreamExecution => Some(s)
    case _ => None
  }

  /** How the query is triggered, in streamctl's terms ([[SparkQueries.trigger]]). */
  def trigger(query: StreamingQuery): Option[QueryTrigger] = of(query).map(_.trigger match {
    case ProcessingTimeTrigger(intervalMs) => QueryTrigger.Every(intervalMs)
    case _ => QueryTrigger.Other
  })

  /**
   * Whether the query writes its offset and commit logs in the background (asynchronous progress
   * tracking, [[SparkQueries.logsInBackground]]).
   */
  def logsInBackground(query: StreamingQuery): Option[Boolean] =
    of(query).map(_.isInstanceOf[AsyncProgressTrackingMicroBatchExecution])
}
