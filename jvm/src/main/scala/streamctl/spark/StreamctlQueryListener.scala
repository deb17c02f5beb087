package streamctl.spark

import org.apache.spark.sql.streaming.StreamingQueryListener
import org.apache.spark.sql.streaming.StreamingQueryListener._
import org.slf4j.LoggerFactory

/**
 * Registered through `spark.sql.streaming.streamingQueryListeners` (configure_spark does it).
 * It sets up the in-band control of a query writing a streamctl sink as the query starts
 * (Spark delivers that event on the query's thread, before the first batch, so a run that
 * executes no batch still knows where its end-of-stream goes), ends it when the query
 * terminates, logs one line per batch for each streamctl source, so a long backlog shows its
 * progress in the driver log, and stops a query whose inputs all reached end-of-stream
 * ([[EndOfStreamStopper]]).
 */
class StreamctlQueryListener extends StreamingQueryListener {
  private val log = LoggerFactory.getLogger(classOf[StreamctlQueryListener])

  override def onQueryStarted(event: QueryStartedEvent): Unit = QueryControlRegistry.queryStarted(event.id.toString)

  override def onQueryProgress(event: QueryProgressEvent): Unit = {
    val p = event.progress
    p.sources.filter(_.description.startsWith(StreamctlMicroBatchStream.DescriptionPrefix)).foreach { s =>
      val behind = Option(s.metrics.get("maxOffsetsBehindLatest")).getOrElse("?")
      log.info(s"query ${Option(p.name).getOrElse(p.id)} batch ${p.batchId}: ${s.description} read ${s.numInputRows} records, " +
        s"at most $behind behind head")
    }
    EndOfStreamStopper.onProgress(p)
  }

  override def onQueryTerminated(event: QueryTerminatedEvent): Unit =
    QueryControlRegistry.queryTerminated(event.id.toString, event.runId.toString)
}
