package streamctl.spark

import java.util.concurrent.{ConcurrentHashMap, CopyOnWriteArrayList}

import org.apache.spark.TaskContext

/**
 * The streamctl writers open in each Spark task attempt of an executor, so that a real-time reader
 * can flush the writers of its own Spark task before it records a control state that lets the
 * watermark go downstream ([[TaskPartitionReader]]). In a real-time query without a shuffle the
 * source's reader and the sink's writer run in the same Spark task, row by row; with a shuffle
 * between them they do not, and there is nothing to flush here (docs/real-time.md says what that
 * means for watermarks). Outside a Spark task (no `TaskContext`) nothing is registered or flushed.
 *
 * {{{
 * val registered = TaskWriters.add(flush)   // writer opened, in its Spark task
 * val flushAll = TaskWriters.ofCurrent()    // reader, in the same Spark task
 * flushAll()                                // any thread, before recording its control states
 * registered.foreach(TaskWriters.remove(_, flush)) // writer closed
 * }}}
 */
object TaskWriters {
  private val byAttempt = new ConcurrentHashMap[Long, CopyOnWriteArrayList[() => Unit]]()

  /** Registers `flush` for the current Spark task attempt; returns the attempt, if in a task. */
  def add(flush: () => Unit): Option[Long] =
    Option(TaskContext.get()).map(_.taskAttemptId()).map { attempt =>
      byAttempt.computeIfAbsent(attempt, _ => new CopyOnWriteArrayList[() => Unit]()).add(flush)
      attempt
    }

  def remove(attempt: Long, flush: () => Unit): Unit =
    byAttempt.computeIfPresent(attempt, (_, l) => { l.remove(flush); if (l.isEmpty) null else l })

  /**
   * Flushes the writers of the current Spark task attempt open now, when called (from any thread: a
   * producer's flush is thread-safe).
   */
  def ofCurrent(): () => Unit =
    Option(TaskContext.get()).flatMap(t => Option(byAttempt.get(t.taskAttemptId()))) match {
      case Some(writers) =>
        val now = writers.toArray(Array.empty[() => Unit])
        () => now.foreach(f => f())
      case None => () => ()
    }
}
