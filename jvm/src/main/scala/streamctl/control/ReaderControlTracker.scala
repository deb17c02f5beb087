package streamctl.control

import streamctl.StreamctlException
import streamctl.system.SSP

/**
 * The reader's hot-path helper for one task and one batch: starts from the batch's
 * control states for the task's intermediate SSPs, reads every record of those SSPs,
 * and tells the reader which are user records. Control records update the bookkeeping
 * and are not rows. Single-threaded, like the reader.
 *
 * Only intermediate SSPs are tracked: records of other streams are not framed and must
 * not be passed in, and they take no part in the task watermark.
 *
 * {{{
 * val tracker = new ReaderControlTracker(task.intermediateSsps, batchStart.controlStates)
 * val orders0 = tracker.channel(SSP.kafka("orders", 0))   // keep one per buffered SSP
 * orders0.read(record.offset, record.value) match {
 *   case ReaderControlTracker.User =>
 *     emitRow(record.value, IntermediateMessage.PayloadOffset, IntermediateMessage.payloadLength(record.value),
 *             watermark = if (tracker.hasTaskWatermark) tracker.taskWatermarkMs else null)
 *   case _ => ()                                         // control message, no row
 * }
 * metadataStore.put(..., ControlStates.write(tracker.state)) // at the end of the partition
 * }}}
 */
final class ReaderControlTracker(intermediate: Iterable[SSP], start: Map[SSP, ControlState]) {
  import ReaderControlTracker._

  private val channels: Array[Channel] =
    intermediate.toSeq.distinct.sorted.map(s => new Channel(this, s, start.getOrElse(s, ControlState.empty))).toArray
  private val bySsp: Map[SSP, Channel] = channels.iterator.map(c => c.ssp -> c).toMap

  private var current: Option[Long] = ControlStates.taskWatermark(channels.map(_.state))

  /** The handle for one intermediate SSP; keeping it saves a map lookup per record. */
  def channel(ssp: SSP): Channel =
    bySsp.getOrElse(ssp, throw StreamctlException(
      s"${ControlErrors.where(ssp)} is not an intermediate SSP of this task (tracked: ${channels.map(_.ssp).mkString(", ")})"))

  /** Reads one record; see [[Channel.read]]. */
  def read(ssp: SSP, offset: Long, value: Array[Byte]): Int = channel(ssp).read(offset, value)

  /** The task watermark (epoch ms) for rows read now; see [[ControlStates.taskWatermark]]. */
  def taskWatermark: Option[Long] = current

  /** Allocation-free form of [[taskWatermark]] for the per-row path. */
  def hasTaskWatermark: Boolean = current.isDefined
  def taskWatermarkMs: Long = current.getOrElse(throw new NoSuchElementException("no task watermark yet"))

  def allEndOfStream: Boolean = channels.nonEmpty && channels.forall(_.isEndOfStream)

  /** The resulting states of this task's intermediate SSPs, to record for (batch, task). */
  def state: Map[SSP, ControlState] = channels.iterator.map(c => c.ssp -> c.state).toMap

  private def controlApplied(): Int = {
    val next = ControlStates.taskWatermark(channels.map(_.state))
    val advanced = ControlState.advances(current, next)
    current = next
    if (advanced) WatermarkAdvanced else Control
  }
}

object ReaderControlTracker {
  /** [[Channel.read]] results. */
  final val User = 0
  final val Control = 1
  final val WatermarkAdvanced = 2

  /** One intermediate SSP of a [[ReaderControlTracker]]. */
  final class Channel private[ReaderControlTracker] (owner: ReaderControlTracker, val ssp: SSP, initial: ControlState) {
    private var current = initial
    private var ended = initial.isEndOfStream

    /**
     * Reads the record at `offset`. Returns [[User]] for a user record, whose payload is
     * `value[IntermediateMessage.PayloadOffset, value.length)` (no allocation on this path);
     * [[Control]] for a control message; [[WatermarkAdvanced]] for one that moved the
     * task watermark forward. Errors name stream, partition and offset.
     */
    def read(offset: Long, value: Array[Byte]): Int = {
      val t = IntermediateMessage.typeOf(ssp, offset, value)
      if (t == IntermediateMessage.UserType) {
        if (ended) current.checkData(ssp, offset)
        User
      } else {
        current = current(IntermediateMessage.decodeControl(ssp, offset, value), ssp, offset).state
        ended = current.isEndOfStream
        owner.controlApplied()
      }
    }

    def state: ControlState = current
    def isEndOfStream: Boolean = ended
    def watermark: Option[Long] = current.watermark
  }
}
