package streamctl.control

import java.util.concurrent.{ExecutorService, LinkedBlockingQueue, ThreadPoolExecutor, TimeUnit}

import org.slf4j.LoggerFactory

import streamctl.DaemonThreads
import streamctl.control.SspControlStates.States
import streamctl.system.TaskName

/**
 * Real-time mode: records a reader's control states in the metadata store ([[ControlResults]]) off
 * the reader's thread, so that reading never waits for a flush or a store write. Only the newest
 * states matter (the driver merges them at the sink's watermark interval), so states handed in
 * while a write runs replace each other and the next write takes the latest.
 *
 * Before each write it runs `beforeWrite` (given with the states: the reader flushes its own Spark
 * task's writers there), so a watermark never reaches the store, hence never goes downstream, ahead
 * of rows the task had sent before it heard that watermark. A write whose `beforeWrite` failed (a
 * writer's send failed) is dropped: the Spark task fails on that writer anyway, and its batch is
 * re-run.
 *
 * What a reader recorded late (after its batch ended) is harmless: the end offset carries the
 * batch's final states, and the driver only reads the running batch's `seq`.
 *
 * {{{
 * val publisher = new ControlStatePublisher(results, "Partition 0")
 * publisher.publish(seq, states, () => flushWriters())  // returns at once
 * publisher.close()                                     // the batch ended
 * }}}
 */
final class ControlStatePublisher(results: ControlResults, task: TaskName) {
  import ControlStatePublisher._

  private var pending: Option[Pending] = None
  private var running = false
  private var closed = false

  /**
   * Hands over the task's states of batch `seq`; written soon, after `beforeWrite`, unless newer
   * ones come first.
   */
  def publish(seq: Long, states: States, beforeWrite: () => Unit): Unit = synchronized {
    if (!closed) {
      pending = Some(Pending(seq, states, beforeWrite))
      if (!running) {
        running = true
        writers.execute(() => drain())
      }
    }
  }

  /**
   * No more states: what is pending is dropped (the batch's end offset carries its final states).
   */
  def close(): Unit = synchronized {
    closed = true
    pending = None
  }

  private def drain(): Unit = {
    var next = take()
    while (next.isDefined) {
      val p = next.get
      try {
        p.beforeWrite()
        results.put(p.seq, task, p.states)
      } catch {
        case e: Exception =>
          log.warn(s"Task '$task' could not record its control states of batch ${p.seq} " +
            s"(the sink's watermark waits for the next ones): ${e.getMessage}")
      }
      next = take()
    }
  }

  private def take(): Option[Pending] = synchronized {
    val p = pending
    pending = None
    if (p.isEmpty) running = false
    p
  }
}

object ControlStatePublisher {
  private val log = LoggerFactory.getLogger(classOf[ControlStatePublisher])

  private final case class Pending(seq: Long, states: States, beforeWrite: () => Unit)

  // Shared by every reader of the executor: a write is short, and readers of one executor
  // publishing at once merely queue; threads that sit idle go away.
  private lazy val writers: ExecutorService = {
    val pool = new ThreadPoolExecutor(
      4,
      4,
      30L,
      TimeUnit.SECONDS,
      new LinkedBlockingQueue[Runnable](),
      DaemonThreads.named("streamctl-control-states")
    )
    pool.allowCoreThreadTimeOut(true)
    pool
  }
}
