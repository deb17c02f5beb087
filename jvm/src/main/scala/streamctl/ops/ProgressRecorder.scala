package streamctl
package ops

import java.util.concurrent.TimeUnit

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import streamctl.metadata.{MetadataStore, StoreLayout}
import streamctl.system.SSP

/**
 * Keeps one source's batch summaries off the thread that hands them in, Spark's listener bus
 * thread, which delivers the events of every query of the application. Keeping a summary is an
 * entry of the source's [[ProgressHistory]] (a write and a delete, and a listing every
 * [[ProgressHistory.SweepEvery]] batches: several requests on an object store) and, with option
 * commitOffsets, the batch's positions for the consumer group. Done on that thread, a slow store or
 * broker held up every query's events until Spark's queue filled and it dropped some, a query's
 * termination among them.
 *
 * A daemon thread of the source's own keeps them in batch order. The history gets every entry
 * except one [[ProgressHistory.Limit]] batches or more behind a newer one still queued (the history
 * drops it once it holds that one), so a store slower than the batches leaves a bounded queue; the
 * group gets the newest positions of what was queued (a batch end has every SSP's). The thread
 * waits for more while the source runs (an idle minute at most); once the source stopped
 * ([[close]]) it keeps what is queued and ends, and a summary that comes later (the last batch's
 * report comes after its source stopped) starts one for itself. A failure is a WARN: the history
 * and the group are pictures for people, and must never fail the query.
 *
 * {{{
 * val recorder = new ProgressRecorder(
 *   "streamctl[orders]", () => MetadataStore.open(path, conf), keys, committer.committed)
 * recorder.record(summary) // returns at once
 * recorder.close()         // the source stopped: never waits
 * }}}
 */
final class ProgressRecorder(
    who: String,
    store: () => MetadataStore,
    source: StoreLayout.Source,
    commit: Map[SSP, Long] => Unit
) {
  import ProgressRecorder._

  // Guarded by `this`; `running` while a thread takes from `queue`.
  private var queue = Vector.empty[BatchSummary]
  private var running = false
  private var closed = false

  /** Queues the summary of the source's next batch, to be kept on the source's thread. */
  def record(summary: BatchSummary): Unit = synchronized {
    queue = queued(queue, summary)
    if (running) notifyAll()
    else {
      running = true
      DaemonThreads.named(s"streamctl-progress-$who").newThread(() => keepAll()).start()
    }
  }

  /** The source stopped: its thread ends once it kept what is queued. */
  def close(): Unit = synchronized {
    closed = true
    notifyAll()
  }

  private def keepAll(): Unit = {
    var backlog = take()
    while (backlog.nonEmpty) {
      keep(backlog)
      backlog = take()
    }
  }

  /* What is queued, waiting for some while the source runs; an empty answer ends the thread (a
   * summary after that starts another). */
  private def take(): Vector[BatchSummary] = synchronized {
    val deadline = System.nanoTime() + IdleNanos
    var left = IdleNanos
    // Nobody interrupts this thread; if someone did, it ends as when idle.
    try
      while (queue.isEmpty && !closed && left > 0) {
        TimeUnit.NANOSECONDS.timedWait(this, left)
        left = deadline - System.nanoTime()
      }
    catch { case _: InterruptedException => }
    val taken = queue
    queue = Vector.empty
    if (taken.isEmpty) running = false
    taken
  }

  private def keep(backlog: Vector[BatchSummary]): Unit = {
    try {
      val opened = store()
      try backlog.foreach { summary =>
          try new ProgressHistory(opened, source).append(summary)
          catch { case NonFatal(e) => warn(s"batch ${summary.batchId}'s progress history", e) }
        }
      finally opened.close()
    } catch { case NonFatal(e) => warn("the progress history", e) }
    // After the history: once the source stopped, a commit may wait for a broker that is gone.
    try commit(backlog.last.positions)
    catch { case NonFatal(e) => warn("the consumer group's positions", e) }
  }

  private def warn(what: String, e: Throwable): Unit =
    log.warn(s"Could not keep $what of $who: $e")
}

object ProgressRecorder {
  private val log = LoggerFactory.getLogger(classOf[ProgressRecorder])

  // How long a running source's thread waits for the next summary before it ends.
  private val IdleNanos = TimeUnit.MINUTES.toNanos(1)

  /**
   * The queue once `summary` (the newest batch) joined it: in the order they came, without the
   * entries the history does not keep beside the newest, [[ProgressHistory.Limit]] batches or more
   * behind it.
   */
  private[ops] def queued(queue: Vector[BatchSummary], summary: BatchSummary)
      : Vector[BatchSummary] =
    (queue :+ summary).filter(_.batchId > summary.batchId - ProgressHistory.Limit)
      .takeRight(ProgressHistory.Limit)
}
