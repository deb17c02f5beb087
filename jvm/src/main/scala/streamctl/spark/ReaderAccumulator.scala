package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.{SparkContext, SparkEnv}
import org.apache.spark.util.CollectionAccumulator

import streamctl.plan.{ReaderReports, ReaderRun, RecordTimes}
import streamctl.system.{SSP, SkippedRange, TaskName}

/**
 * Carries the readers' reports ([[ReaderRun]]s, [[SkippedRange]]s, [[RecordTimes]]) back to the
 * driver with a Spark accumulator: the public way for code on executors to report facts to the
 * driver. Spark merges a reader attempt's additions when it succeeds (failed attempts are dropped),
 * before the batch ends.
 *
 * {{{
 * val reports = ReaderAccumulator.register(spark.sparkContext) // on the driver; ships inside the reader factory
 * reports.ran(TaskName("Partition 0"), reused = true)          // in a reader, on an executor
 * reports.runs                                                 // on the driver, after the batch ran
 * }}}
 */
final class ReaderAccumulator private (accumulator: CollectionAccumulator[AnyRef])
    extends ReaderReports with Serializable {

  /** Called by a reader: `task` runs on this executor. */
  def ran(task: TaskName, reused: Boolean): Unit =
    accumulator.add(ReaderRun(task, SparkEnv.get.executorId, reused))

  /** Called by a reader: it skipped records gone from the broker. */
  def skip(range: SkippedRange): Unit = accumulator.add(range)

  /** Called by a reader once it read: the newest record time per SSP it read. */
  def read(times: RecordTimes): Unit = if (times.newestMs.nonEmpty) accumulator.add(times)

  override def clear(): Unit = accumulator.reset()

  override def runs: Seq[ReaderRun] = reports.collect { case r: ReaderRun => r }

  override def skipped: Seq[SkippedRange] = reports.collect { case r: SkippedRange => r }.distinct

  // A batch read twice (a `foreachBatch` running several actions) reports twice: the max is the
  // same.
  override def recordTimes: Map[SSP, Long] =
    reports.collect { case r: RecordTimes => r.newestMs }.flatten.groupMapReduce(_._1)(_._2)(
      math.max
    )

  private def reports: Seq[AnyRef] = accumulator.value.asScala.toList
}

object ReaderAccumulator {
  def register(sc: SparkContext): ReaderAccumulator = {
    val accumulator = new CollectionAccumulator[AnyRef]
    sc.register(accumulator) // unnamed: kept out of the UI, it is bookkeeping
    new ReaderAccumulator(accumulator)
  }
}
