package streamctl.spark

import java.time.Instant
import java.util.UUID

import scala.jdk.CollectionConverters._
import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.sql.streaming.{
  SourceProgress,
  StreamingQuery,
  StreamingQueryListener,
  StreamingQueryManager,
  StreamingQueryProgress
}
import org.apache.spark.sql.streaming.StreamingQueryListener._
import org.slf4j.LoggerFactory

import streamctl.ops.BatchSummary
import streamctl.plan.Heads
import streamctl.planner.SourceStates

/**
 * Registered on every session that uses streamctl ([[QueryListeners]]; also accepted from
 * `spark.sql.streaming.streamingQueryListeners`, then adopted rather than doubled). It sets up the
 * in-band control of a query writing a streamctl sink as the query starts (Spark delivers that
 * event on the query's thread, before the first batch, so a run that executes no batch still knows
 * where its end-of-stream goes), ends it when the query terminates, and stops a query whose inputs
 * all reached end-of-stream ([[EndOfStreamStopper]]).
 *
 * Per batch and streamctl source it summarizes what streamctl decided ([[BatchSummary]]): one INFO
 * line on logger `streamctl.batch` (quiet at Spark's default WARN; enable it with
 * `logger.streamctl_batch.name = streamctl.batch` and `.level = info` in log4j2.properties), and an
 * entry in the source's bounded progress history, which `streamctl report` draws (and with option
 * commitOffsets the batch's positions for the consumer group), both kept off this thread by the
 * source's [[streamctl.ops.ProgressRecorder]]; and the query's gauges in Spark's metrics system
 * ([[QueryMetrics]]), removed when it terminates. Spark delivers every query's events on one thread
 * and drops some when they queue up, so nothing here waits for a store or a broker.
 */
class StreamctlQueryListener extends StreamingQueryListener {
  private val log = LoggerFactory.getLogger(StreamctlQueryListener.BatchLogger)
  // The queries of the session this listener serves: events arrive on Spark's listener thread,
  // where that session need not be active (Spark Connect).
  @volatile private var queries: Option[StreamingQueryManager] = None

  private[spark] def attach(manager: StreamingQueryManager): Unit = queries = Some(manager)

  private def find(id: String): Option[StreamingQuery] =
    queries.flatMap(m => Try(Option(m.get(UUID.fromString(id)))).toOption.flatten).orElse(
      QueryLookup.find(id)
    )

  override def onQueryStarted(event: QueryStartedEvent): Unit =
    QueryControlRegistry.queryStarted(event.id.toString)

  override def onQueryProgress(event: QueryProgressEvent): Unit = {
    val p = event.progress
    val ours =
      p.sources.filter(_.description.startsWith(StreamctlMicroBatchStream.DescriptionPrefix))
    val exported = Seq.newBuilder[(String, Option[BatchSummary], Map[String, String])]
    ours.groupBy(_.description).foreach { case (description, sources) =>
      val recorders =
        QueryControlRegistry.forProgress(p.id.toString, p.runId.toString).toSeq.flatMap(
          _.progressRecorders(description)
        )
      sources.zipWithIndex.foreach { case (s, i) =>
        val summarized = summarize(p, s)
        exported += ((s"$description#$i", summarized, s.metrics.asScala.toMap))
        summarized.foreach { summary =>
          log.info(s"query ${Option(p.name).getOrElse(p.id)} ${s.description} ${summary.line}")
          recorders.lift(i).foreach(_(summary))
        }
      }
    }
    // A picture for people: a failure to export it must not fail the query.
    try QueryMetrics.update(p.id.toString, Option(p.name), exported.result(), p.sources.length)
    catch { case NonFatal(e) => log.warn(s"Could not export the metrics of query ${p.id}: $e") }
    EndOfStreamStopper.onProgress(p, find)
  }

  override def onQueryIdle(event: QueryIdleEvent): Unit =
    EndOfStreamStopper.onIdle(event.id, event.runId, find)

  override def onQueryTerminated(event: QueryTerminatedEvent): Unit = {
    QueryMetrics.remove(event.id.toString)
    QueryControlRegistry.queryTerminated(event.id.toString, event.runId.toString)
  }

  /**
   * None for a report of no batch: nothing planned yet, or a no-data report (the offsets did not
   * move).
   */
  private def summarize(p: StreamingQueryProgress, s: SourceProgress): Option[BatchSummary] =
    Option(s.endOffset).filter(e => e.trim.startsWith("{") && e != s.startOffset).map { end =>
      def position(json: String) =
        Option(json).filter(_.trim.startsWith("{")).map(SourceStates.parse)
      BatchSummary.of(
        p.batchId,
        Try(Instant.parse(p.timestamp).toEpochMilli).getOrElse(System.currentTimeMillis()),
        position(s.startOffset),
        SourceStates.parse(end),
        Heads.read(s.latestOffset),
        QueryLookup.reportedWatermarkMs(p),
        s.metrics.asScala.toMap
      )
    }
}

object StreamctlQueryListener {

  /** The logger of the one line per batch and streamctl source. */
  val BatchLogger = "streamctl.batch"
}
