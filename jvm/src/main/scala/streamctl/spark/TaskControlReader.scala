package streamctl.spark

import streamctl.StreamctlException
import streamctl.control.{ControlState, ReaderControlTracker, WatermarkSummary}
import streamctl.system.{Envelope, EnvelopeDecoder, SSP}

/**
 * In-band control for one task of one batch, on the executor. Intermediate SSPs are read
 * through [[decoder]]: user records lose their type byte and become rows, control
 * records update the task's bookkeeping and become nothing. Every row of an intermediate
 * stream carries [[watermarkMs]]; when the task has read all its ranges, [[finish]]
 * records the bookkeeping for the driver (only if the batch changed it).
 *
 * The row watermark is the query's upstream watermark as far as this task knows it: the
 * reconciliation rule of DESIGN.md over every intermediate SSP of the source, this task's
 * own SSPs as read so far and the others as of the batch start (they only move forward, so
 * this never overtakes the true minimum). Spark keeps one watermark per query, so a per-task
 * value would let a fast task's rows pull it past a slow task's data.
 *
 * {{{
 * val control = TaskControlReader(partition, intermediateStreams)
 * val reader = new KafkaTaskReader(ranges, consumer, chooser, readWait, decoders = control.decoderFor)
 * ... converter.toRow(envelope, control.watermarkMs(envelope.ssp)) ...
 * control.finish()                                        // after the last record
 * }}}
 */
final class TaskControlReader private (task: String, control: TaskControl, intermediate: Set[SSP]) {
  private val tracker = new ReaderControlTracker(intermediate, control.startStates)
  private var rowWatermark: Long = compute()
  private var finished = false

  /** The decoder of `ssp`: control-aware for intermediate SSPs, pass-through for others. */
  def decoderFor(ssp: SSP): EnvelopeDecoder =
    if (!intermediate.contains(ssp)) EnvelopeDecoder.Identity
    else {
      val channel = tracker.channel(ssp)
      (e: Envelope) =>
        if (channel.read(e.offset, e.value) == ReaderControlTracker.User)
          new Envelope(e.ssp, e.offset, e.timestamp, e.key,
            java.util.Arrays.copyOfRange(e.value, 1, e.value.length), e.headerKeys, e.headerValues)
        else { rowWatermark = compute(); null }
    }

  /** The row watermark (epoch ms) for a row of `ssp`; -1 (null) for plain streams or while undefined. */
  def watermarkMs(ssp: SSP): Long = if (intermediate.contains(ssp)) rowWatermark else -1L

  /** Records the task's bookkeeping for the driver once every range was read to its end. */
  def finish(): Unit = if (!finished) {
    finished = true
    val end = tracker.state
    if (end.exists { case (s, st) => control.startStates.getOrElse(s, ControlState.empty) != st })
      control.results.put(control.seq, task, end)
  }

  private def compute(): Long =
    (WatermarkSummary.of(tracker.state.values) ++ control.others).watermark.getOrElse(-1L)
}

object TaskControlReader {
  /** A reader for the task; `None` when the task reads no intermediate stream. */
  def apply(partition: TaskInputPartition, intermediateStreams: Set[String]): Option[TaskControlReader] = {
    val ssps = partition.ranges.map(_.ssp).filter(s => intermediateStreams.contains(s.stream)).toSet
    if (ssps.isEmpty) None
    else partition.control match {
      case Some(c) => Some(new TaskControlReader(partition.task, c, ssps))
      // Reading framed records without bookkeeping would lose control messages for good.
      case None => throw StreamctlException(s"Task '${partition.task}' reads intermediate SSPs " +
        s"${ssps.toSeq.sorted.mkString(", ")} but was planned without a control start state")
    }
  }
}
