package streamctl.control

import scala.collection.mutable
import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import streamctl.control.SspControlStates.States
import streamctl.system.TaskName

/**
 * The driver's collection of a micro-batch's control results, as the readers report them (each task
 * once it read all its ranges: its states when the batch changed them). Once every task the batch
 * planned with control ([[expect]]) has reported, the results are written to the store as one value
 * ([[ControlResults.putBatch]]), or not at all when no task changed its states: one store write per
 * batch whatever its task count, where each reader used to write its own.
 *
 * Durability: the results must be in the store before Spark logs the batch as committed, since a
 * restarted query plans its next batch from them. Spark hands a reader's reports to the driver as
 * its attempt succeeds, before the job that ran it ends (see `spark.ControlAccumulator`), so
 * [[reported]] writes them while the job still runs, before the sink commits and the commit log is
 * written. Should that write fail (or a job read only some tasks), [[of]] writes what was reported
 * before the driver uses it, as readers' own writes did. A task reported twice (a speculative or
 * re-run attempt, or a `foreachBatch` reading the batch again) counts once: its results are the
 * same.
 *
 * {{{
 * val collected = new BatchResults(results)
 * collected.expect(7, Seq("Partition 0", "Partition 1"))  // the batch is planned
 * collected.reported(7, "Partition 0", Some(states))      // as Spark hands over each reader's report
 * collected.reported(7, "Partition 1", None)              // the last one: one store write
 * collected.of(7)                                         // Some(Seq("Partition 0" -> states))
 * }}}
 */
final class BatchResults(results: => ControlResults) {
  private var seq = -1L
  private var expected = Set.empty[String]
  private val reports = mutable.HashMap.empty[String, Option[States]]
  // How many changed tasks' results the store holds for `seq`.
  private var written = 0

  /** Batch `seq` is planned: `tasks` read intermediate SSPs, each will report once it read them. */
  def expect(seq: Long, tasks: Iterable[TaskName]): Unit = synchronized {
    if (seq != this.seq) {
      this.seq = seq
      reports.clear()
      written = 0
    }
    expected = tasks.iterator.map(_.name).toSet
  }

  /**
   * A reader of batch `seq` read all of `task`'s ranges; `states` when the batch changed them. The
   * last report of the batch writes its results.
   */
  def reported(seq: Long, task: TaskName, states: Option[States]): Unit = synchronized {
    if (seq == this.seq && !reports.contains(task.name)) {
      reports(task.name) = states
      if (complete) {
        try write()
        catch {
          // Written again before the driver uses them ([[of]]); a failure there fails the query.
          case NonFatal(e) =>
            BatchResults.log.warn(s"Writing the control results of batch $seq failed; retried", e)
        }
      }
    }
  }

  /**
   * The results of batch `seq` when this run planned it, in the store by the time this returns;
   * None for another batch (a restarted query's first: the store has it).
   */
  def of(seq: Long): Option[Seq[(String, States)]] = synchronized {
    if (seq != this.seq) None
    else {
      write()
      Some(changed)
    }
  }

  /** Whether [[of]]`(seq)` is final: every task of the batch reported, or another run ran it. */
  def settled(seq: Long): Boolean = synchronized(seq != this.seq || complete)

  private def complete: Boolean = expected.forall(reports.contains)

  private def changed: Seq[(String, States)] = reports.toSeq.collect { case (t, Some(s)) =>
    t -> s
  }

  private def write(): Unit = {
    val c = changed
    if (c.size > written) {
      results.putBatch(seq, c)
      written = c.size
    }
  }
}

object BatchResults {
  private val log = LoggerFactory.getLogger(classOf[BatchResults])
}
