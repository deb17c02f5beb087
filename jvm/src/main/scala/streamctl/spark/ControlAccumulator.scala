package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.SparkContext
import org.apache.spark.util.AccumulatorV2

import streamctl.control.{BatchResults, SspControlStates}
import streamctl.system.TaskName

/**
 * Carries each micro-batch reader's control results (its task's intermediate SSP states when the
 * batch changed them, or that it has none) to the driver's [[BatchResults]], which writes a batch's
 * results to the metadata store as one value.
 *
 * Spark merges a reader attempt's additions into the driver's accumulator when its scheduler
 * handles the attempt's success, before the job that ran it ends, and drops a failed attempt's. The
 * driver's instance hands every report to [[BatchResults]] right there, so the batch's last report
 * writes the results before the job ends, hence before the sink commits and Spark logs the batch as
 * committed: a driver that dies after the commit log still finds them in the store. A task can
 * report twice (speculation, a re-run stage, a `foreachBatch` reading the batch again); the first
 * report counts, the results being the same.
 *
 * {{{
 * val control = ControlAccumulator.register(sc, planner.controlResults) // on the driver
 * control.report(7, TaskName("Partition 0"), Some(states))                // in a reader, on an executor
 * }}}
 */
final class ControlAccumulator private (@transient private val collected: BatchResults)
    extends AccumulatorV2[ControlAccumulator.Report, Seq[ControlAccumulator.Report]] {
  import ControlAccumulator.Report

  // A reader's reports, on its executor (the driver's instance hands them on instead).
  private val reports = new java.util.ArrayList[Report]()

  /** Called by a reader: it read all of `task`'s ranges of batch `seq`. */
  def report(seq: Long, task: TaskName, states: Option[SspControlStates.States]): Unit =
    add(Report(seq, task, states.map(SspControlStates.write)))

  override def isZero: Boolean = reports.synchronized(reports.isEmpty)

  override def copy(): ControlAccumulator = {
    val c = new ControlAccumulator(null)
    reports.synchronized(c.reports.addAll(reports))
    c
  }

  override def reset(): Unit = reports.synchronized(reports.clear())

  override def add(r: Report): Unit = reports.synchronized { reports.add(r); () }

  override def merge(other: AccumulatorV2[Report, Seq[Report]]): Unit =
    other.value.foreach { r =>
      if (collected == null) add(r)
      else collected.reported(
        r.seq,
        r.task,
        r.states.map(SspControlStates.parse(_, s"control results of batch ${r.seq} ${r.task}"))
      )
    }

  override def value: Seq[Report] = reports.synchronized(reports.asScala.toList)
}

object ControlAccumulator {

  /** One task's report; `states` as [[SspControlStates.write]] wrote them. */
  final case class Report(seq: Long, task: TaskName, states: Option[String])

  def register(sc: SparkContext, collected: BatchResults): ControlAccumulator = {
    val accumulator = new ControlAccumulator(collected)
    sc.register(accumulator) // unnamed: kept out of the UI, it is bookkeeping
    accumulator
  }
}
