package streamctl.spark

import java.util.UUID

import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryProgress}
import org.apache.spark.streamctl.SparkQueries
import org.slf4j.LoggerFactory

/**
 * Stops a query whose every input reached end-of-stream (option `stop.on.end.of.stream`, default
 * true). Fed by [[StreamctlQueryListener]] with each progress report and idle trigger: once the
 * query's control says every source of the query is a streamctl source whose inputs are all at
 * end-of-stream ([[QueryControl.endOfStreamReached]]), a daemon thread waits until the query is
 * idle (its sources admit nothing more, so the only batches left are Spark's own, e.g. one that
 * closes windows) and then stops it. Stopping an idle query interrupts no batch; the sources' stop
 * sends end-of-stream downstream before `awaitTermination()` returns.
 *
 * {{{
 * EndOfStreamStopper.onProgress(event.progress, find)   // from StreamingQueryListener.onQueryProgress
 * }}}
 */
object EndOfStreamStopper {
  private val log = LoggerFactory.getLogger(EndOfStreamStopper.getClass)
  private val stopping = java.util.concurrent.ConcurrentHashMap.newKeySet[UUID]()

  /** `find` looks a query up by id in the session that runs it. */
  def onProgress(p: StreamingQueryProgress, find: String => Option[StreamingQuery]): Unit =
    check(p.id, p.runId, find, Some(p.sources.length))

  /**
   * A trigger found nothing to read. A query restarted after its inputs had all ended never reports
   * progress (it runs no batch), so this is where it learns it is done; the query's plan says how
   * many sources it has.
   */
  def onIdle(id: UUID, runId: UUID, find: String => Option[StreamingQuery]): Unit =
    check(id, runId, find, find(id.toString).flatMap(SparkQueries.streamingSources))

  private def check(
      id: UUID,
      runId: UUID,
      find: String => Option[StreamingQuery],
      querySources: => Option[Int]
  ): Unit = {
    val ended = QueryControlRegistry.get(id.toString).exists(c =>
      querySources.exists(c.run.endOfStreamReached)
    )
    if (ended && stopping.add(runId)) {
      val t = new Thread(() => stopWhenIdle(id, runId, find), s"streamctl-end-of-stream-$id")
      t.setDaemon(true)
      t.start()
    }
  }

  private def stopWhenIdle(id: UUID, runId: UUID, find: String => Option[StreamingQuery]): Unit =
    try find(id.toString).filter(_.isActive).foreach { q =>
        log.info(
          s"Query ${Option(q.name).getOrElse(id)}: every input is at end-of-stream; stopping it once idle"
        )
        q.processAllAvailable()
        q.stop()
      }
    catch {
      case e: Exception =>
        log.warn(s"Query $id: stopping at end-of-stream failed: ${e.getMessage}", e)
    } finally stopping.remove(runId)
}
