package streamctl.spark

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerExecutorMetricsUpdate}
import org.apache.spark.util.AccumulatorV2

import streamctl.system.SSP

/**
 * Real-time mode with option commitOffsets: where the running readers stand, reported to the driver
 * while a batch runs. A real-time batch runs for its whole duration (minutes, often), and its
 * readers' ends reach the driver only when it ends; monitoring should not wait that long.
 *
 * A reader puts its positions (per SSP, the next offset to read) into a [[PositionAccumulator]] as
 * it reads. Spark's executor heartbeat (`spark.executor.heartbeatInterval`, 10 s by default) sends
 * every running Spark task attempt's accumulators to the driver, where Spark posts them to its
 * listeners: the public path by which running code on executors reaches the driver without a server
 * or store of ours. The listener hands each heartbeat's positions to `onReport`.
 *
 * {{{
 * val positions = HeartbeatPositions.start(spark.sparkContext, p => committer.reported(p))
 * positions.accumulator // ships inside the reader factory; readers add their positions
 * positions.stop()      // with the source
 * }}}
 */
final class HeartbeatPositions private (
    val accumulator: PositionAccumulator,
    sc: SparkContext,
    listener: SparkListener
) {
  def stop(): Unit = sc.removeSparkListener(listener)
}

object HeartbeatPositions {
  def start(sc: SparkContext, onReport: Map[SSP, Long] => Unit): HeartbeatPositions = {
    val accumulator = new PositionAccumulator
    sc.register(accumulator) // unnamed: bookkeeping, kept out of the UI
    val id = accumulator.id
    val listener = new SparkListener {
      override def onExecutorMetricsUpdate(update: SparkListenerExecutorMetricsUpdate): Unit = {
        val reported = for {
          (_, _, _, accumulators) <- update.accumUpdates
          info <- accumulators if info.id == id
          value <- info.update
        } yield value.asInstanceOf[Map[SSP, Long]]
        if (reported.nonEmpty) onReport(reported.reduce(_ ++ _))
      }
    }
    sc.addSparkListener(listener)
    new HeartbeatPositions(accumulator, sc, listener)
  }
}

/**
 * The positions one reader last reported: `add` replaces what it had for those SSPs. Read from the
 * heartbeat thread while the reader's thread adds, hence one immutable map behind a volatile field.
 */
final class PositionAccumulator extends AccumulatorV2[Map[SSP, Long], Map[SSP, Long]] {
  @volatile private var positions = Map.empty[SSP, Long]

  override def isZero: Boolean = positions.isEmpty

  override def copy(): PositionAccumulator = {
    val c = new PositionAccumulator
    c.positions = positions
    c
  }

  override def reset(): Unit = positions = Map.empty

  override def add(v: Map[SSP, Long]): Unit = positions = positions ++ v

  override def merge(other: AccumulatorV2[Map[SSP, Long], Map[SSP, Long]]): Unit =
    positions = positions ++ other.value

  override def value: Map[SSP, Long] = positions
}
