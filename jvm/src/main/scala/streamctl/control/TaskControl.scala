package streamctl.control

import streamctl.control.SspControlStates.States
import streamctl.system.SSP

/**
 * What the driver hands one task of one batch for in-band control: the batch's number (`seq`, under
 * which the task records its result, see [[ControlResults]]), the start states of the task's
 * intermediate SSPs (the state after the previous batch, from the end offset), and a summary of
 * every other intermediate SSP of the source at that point. Serializable; the states travel as JSON
 * because [[SspControlState]] is a plain value class.
 *
 * {{{
 * val tc = TaskControl(seq = 7, SspControlStates.write(myStates), others)
 * tc.startStates                         // on the executor
 * }}}
 */
final case class TaskControl(seq: Long, startJson: String, others: WatermarkSummary) {
  @transient lazy val startStates: States =
    SspControlStates.parse(startJson, s"control start state of batch $seq")
}

object TaskControl {

  /**
   * The intermediate SSPs of a task, with their start states (empty for those without one yet):
   * every one, also those the task has nothing to read in the batch, whose states still hold its
   * rows' watermark back.
   */
  def startOf(states: States, ssps: Iterable[SSP]): States =
    ssps.iterator.map(s => s -> states.getOrElse(s, SspControlState.empty)).toMap
}
