package streamctl.spark

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.util.SerializableConfiguration

import streamctl.control.{ControlStates, WatermarkSummary}
import streamctl.control.ControlStates.States
import streamctl.metadata.FileSystemMetadataStore
import streamctl.system.SSP

/**
 * What the driver hands one task of one batch for in-band control: the batch's number
 * (`seq`), the start states of the task's intermediate SSPs (the state after the previous
 * batch, from the end offset), a summary of every other intermediate SSP of the source at
 * that point, and where to record the result. Serializable; the states travel as JSON
 * because [[streamctl.control.ControlState]] is a plain value class.
 *
 * {{{
 * val tc = TaskControl(seq = 7, ControlStates.write(myStates), others, storePath, "control-0", conf)
 * tc.startStates                         // on the executor
 * }}}
 */
final case class TaskControl(
    seq: Long,
    startJson: String,
    others: WatermarkSummary,
    storePath: String,
    namespace: String,
    hadoopConf: Broadcast[SerializableConfiguration]) {

  @transient lazy val startStates: States = ControlStates.parse(startJson, s"control start state of batch $seq")

  /** The results of this batch, on the executor. */
  def results: ControlResults = new ControlResults(new FileSystemMetadataStore(storePath, hadoopConf.value.value), namespace)
}

object TaskControl {
  /** The intermediate SSPs of a task, with their start states (empty for those without one yet). */
  def startOf(states: States, ssps: Iterable[SSP]): States =
    ssps.iterator.flatMap(s => states.get(s).map(s -> _)).toMap
}
