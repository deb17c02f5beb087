package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.{SparkContext, SparkEnv}
import org.apache.spark.util.CollectionAccumulator

import streamctl.system.SkippedRange

/** What a reader tells the driver about one task read on one executor. */
sealed trait ReaderReport

/**
 * One task read on one executor: where it ran, and whether the executor's consumer pool had a
 * consumer for it already (see [[streamctl.system.ConsumerPool]]).
 */
final case class TaskRun(task: String, executorId: String, consumerReused: Boolean) extends ReaderReport

/** Records a reader found gone from the broker and skipped (`fail.on.data.loss=false`). */
final case class ReadSkip(range: SkippedRange) extends ReaderReport

/**
 * Carries [[ReaderReport]]s from the readers back to the driver, with a Spark accumulator: the
 * public way for tasks to report facts to the driver. Spark merges a task's additions when the
 * task succeeds (failed attempts are dropped), before the batch ends, so the driver reads the
 * reports of a batch once it has run.
 *
 * {{{
 * val runs = TaskRuns.register(spark.sparkContext) // on the driver; ships inside the reader factory
 * runs.record("Partition 0", reused = true)         // in a reader, on an executor
 * runs.clear()                                      // on the driver, as a batch is planned
 * runs.current                                      // on the driver, after it ran: its runs
 * }}}
 */
final class TaskRuns private (accumulator: CollectionAccumulator[ReaderReport]) extends Serializable {

  /** Called by a reader: records that `task` runs on this executor. */
  def record(task: String, reused: Boolean): Unit = record(TaskRun(task, SparkEnv.get.executorId, reused))

  def record(report: ReaderReport): Unit = accumulator.add(report)

  /** On the driver: forgets the reports recorded so far. */
  def clear(): Unit = accumulator.reset()

  /** On the driver: the runs recorded since [[clear]]. */
  def current: Seq[TaskRun] = reports.collect { case r: TaskRun => r }

  /**
   * On the driver: the ranges readers skipped since [[clear]], each once (Spark reads a batch
   * again for every action a `foreachBatch` function runs on it).
   */
  def skipped: Seq[SkippedRange] = reports.collect { case ReadSkip(r) => r }.distinct

  private def reports: Seq[ReaderReport] = accumulator.value.asScala.toList
}

object TaskRuns {
  /** Runs that stay in this JVM: for tests of driver-side logic without a SparkContext. */
  private[spark] def unregistered(): TaskRuns = new TaskRuns(new CollectionAccumulator[ReaderReport])

  def register(sc: SparkContext): TaskRuns = {
    val accumulator = new CollectionAccumulator[ReaderReport]
    sc.register(accumulator) // unnamed: kept out of the UI, it is bookkeeping
    new TaskRuns(accumulator)
  }
}
