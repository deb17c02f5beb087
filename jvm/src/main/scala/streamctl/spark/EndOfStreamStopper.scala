package streamctl.spark

import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryProgress}
import org.slf4j.LoggerFactory

/**
 * Stops a query whose every input reached end-of-stream (option `stop.on.end.of.stream`, default
 * true). Fed by [[StreamctlQueryListener]] with each progress report: once the query's control says
 * every source of the query is a streamctl source whose inputs are all at end-of-stream
 * ([[QueryControl.endOfStreamReached]]), a daemon thread waits until the query is idle (its sources
 * admit nothing more, so the only batches left are Spark's own, e.g. one that closes windows) and
 * then stops it. Stopping an idle query interrupts no batch; the sources' stop sends end-of-stream
 * downstream before `awaitTermination()` returns.
 *
 * {{{
 * EndOfStreamStopper.onProgress(event.progress, find)   // from StreamingQueryListener.onQueryProgress
 * }}}
 */
object EndOfStreamStopper {
  private val log = LoggerFactory.getLogger(EndOfStreamStopper.getClass)
  private val stopping = java.util.concurrent.ConcurrentHashMap.newKeySet[java.util.UUID]()

  /** `find` looks a query up by id in the session that runs it. */
  def onProgress(p: StreamingQueryProgress, find: String => Option[StreamingQuery]): Unit = {
    val ended =
      QueryControlRegistry.get(p.id.toString).exists(_.run.endOfStreamReached(p.sources.length))
    if (ended && stopping.add(p.runId)) {
      val t = new Thread(() => stopWhenIdle(p, find), s"streamctl-end-of-stream-${p.id}")
      t.setDaemon(true)
      t.start()
    }
  }

  private def stopWhenIdle(
      p: StreamingQueryProgress,
      find: String => Option[StreamingQuery]
  ): Unit =
    try find(p.id.toString).filter(_.isActive).foreach { q =>
        log.info(
          s"Query ${Option(p.name).getOrElse(p.id)}: every input is at end-of-stream; stopping it once idle"
        )
        q.processAllAvailable()
        q.stop()
      }
    catch {
      case e: Exception =>
        log.warn(s"Query ${p.id}: stopping at end-of-stream failed: ${e.getMessage}", e)
    } finally stopping.remove(p.runId)
}
