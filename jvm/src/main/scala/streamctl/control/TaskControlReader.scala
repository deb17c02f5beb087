package streamctl.control

import streamctl.StreamctlException
import streamctl.control.SspControlStates.States
import streamctl.system.{Envelope, EnvelopeDecoder, SSP, SspRange, TaskName}

/**
 * In-band control for one task of one batch, on the executor: the decoding step of the reader path
 * (Kafka reader -> this -> chooser -> row). Records of the task's intermediate SSPs go through
 * [[decoderFor]]: a user record goes on with its value past the type byte (in place, nothing
 * copied), a control message updates the SSP's bookkeeping ([[SspControlState]]) and goes no
 * further. Single-threaded, like the reader.
 *
 * Every row of an intermediate stream carries [[watermarkMs]]: the query's upstream watermark as
 * far as this task knows it, by the rule of [[WatermarkSummary]] over every intermediate SSP of the
 * source, this task's own SSPs as read so far and the others as of the batch start (they only move
 * forward, so this never overtakes the true minimum). The others include the task's own SSPs it has
 * nothing to read in this batch (held back after a partition expansion, or left out by the batch's
 * budget): their data still to come is this task's. Spark keeps one watermark per query, so a
 * per-task value would let a fast task's rows pull it past a slow task's data.
 *
 * When the task has read all its ranges, [[finish]] hands its bookkeeping to `record` (the driver
 * merges it into the next offset, see [[BatchResults]]), if the batch changed it.
 *
 * {{{
 * val control = TaskControlReader("Partition 0", ranges, partition.control, intermediateStreams)
 * val reader = new KafkaTaskReader(ranges, consumer, chooser, readWait, decoders = control.fold(...)(_.decoderFor))
 * ... converter.toRow(envelope, control.watermarkMs(envelope.ssp)) ...
 * control.finish(changed => reports.control(seq, task, changed))   // after the last record
 * }}}
 */
final class TaskControlReader private (val control: TaskControl, intermediate: Iterable[SSP]) {
  private val channels: Map[SSP, Channel] =
    intermediate.iterator.map(s =>
      s -> new Channel(s, control.startStates.getOrElse(s, SspControlState.empty))
    ).toMap
  // The task's intermediate SSPs without a range in this batch, as of its start.
  private val unread: WatermarkSummary = WatermarkSummary.of(control.startStates.iterator.collect {
    case (s, st) if !channels.contains(s) => st
  }.toSeq)
  private var rowWatermark: Long = computeWatermark()
  private var finished = false
  private var messages = 0L

  /** The decoder of `ssp`: control-aware for intermediate SSPs, pass-through for others. */
  def decoderFor(ssp: SSP): EnvelopeDecoder = channels.getOrElse(ssp, EnvelopeDecoder.Identity)

  /**
   * The row watermark (epoch ms) for a row of `ssp`; -1 (null) for plain streams or while
   * undefined.
   */
  def watermarkMs(ssp: SSP): Long = if (channels.contains(ssp)) rowWatermark else -1L

  /** The states of the task's intermediate SSPs now. */
  def state: States = channels.map { case (s, c) => s -> c.state }

  /**
   * How many control messages this reader has applied so far (real-time readers publish their
   * states when it grows).
   */
  def applied: Long = messages

  /** Every intermediate SSP of the task is at end-of-stream: nothing more can come on them. */
  def atEndOfStream: Boolean =
    SspControlStates.allEndOfStream(channels.keys, s => channels.get(s).map(_.state))

  /**
   * Hands the task's bookkeeping to `record`, once, when every range was read to its end: the
   * states if the batch changed them, else None (the task is done and has nothing to add).
   */
  def finish(record: Option[States] => Unit): Unit = if (!finished) {
    finished = true
    val end = state
    record(Some(end).filter(_.exists { case (s, st) =>
      control.startStates.getOrElse(s, SspControlState.empty) != st
    }))
  }

  private def computeWatermark(): Long =
    (WatermarkSummary.of(
      channels.valuesIterator.map(_.state).toSeq
    ) ++ unread ++ control.others).watermark.getOrElse(-1L)

  /** One intermediate SSP of the task. */
  private final class Channel(ssp: SSP, initial: SspControlState) extends EnvelopeDecoder {
    var state: SspControlState = initial

    override def accept(e: Envelope): Boolean =
      if (IntermediateMessage.typeOf(ssp, e.offset, e.value) == IntermediateMessage.UserType) {
        if (state.isEndOfStream) state.checkData(ssp, e.offset)
        e.skipValueBytes(IntermediateMessage.PayloadOffset)
        true
      } else {
        state =
          state(IntermediateMessage.decodeControl(ssp, e.offset, e.value), ssp, e.offset).state
        messages += 1
        rowWatermark = computeWatermark()
        false
      }
  }
}

object TaskControlReader {

  /** The control of a task reading `ranges`; `None` when it reads no intermediate stream. */
  def apply(
      task: TaskName,
      ranges: Seq[SspRange],
      control: Option[TaskControl],
      intermediateStreams: Set[String]
  ): Option[TaskControlReader] = {
    val ssps = ranges.map(_.ssp).filter(s => intermediateStreams.contains(s.stream)).distinct
    if (ssps.isEmpty) None
    else control match {
      case Some(c) => Some(new TaskControlReader(c, ssps))
      // Reading framed records without bookkeeping would lose control messages for good.
      case None => throw StreamctlException(s"Task '$task' reads intermediate SSPs " +
          s"${ssps.sorted.mkString(", ")} but was planned without a control start state")
    }
  }
}
