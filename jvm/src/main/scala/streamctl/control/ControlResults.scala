package streamctl
package control

import streamctl.StreamctlException
import streamctl.control.SspControlStates.States
import streamctl.metadata.MetadataStore
import streamctl.system.TaskName

/**
 * Where readers leave the control bookkeeping of one (batch, task) for the driver: one metadata
 * store key `<seq>/<task>` in the source's namespace ([[streamctl.metadata.StoreLayout]]), holding
 * the task's intermediate SSP states at the end of its ranges. `seq` is the source's own batch
 * counter (kept in the offset), so a replayed batch writes the same keys again with the same
 * content.
 *
 * A task writes only when the batch changed its states: most batches carry no control message, and
 * the driver starts from the offset's states anyway.
 *
 * {{{
 * val results = new ControlResults(store, StoreLayout.Source("0").controlNamespace)
 * results.put(7, "Partition 2", states)          // executor, end of the task's ranges
 * results.load(7)                                 // driver: Seq("Partition 2" -> states)
 * results.deleteBefore(7)                         // once the offset log holds batch 7's start state
 * }}}
 */
final class ControlResults(store: MetadataStore, val namespace: String) {

  def put(seq: Long, task: TaskName, states: States): Unit =
    store.put(namespace, ControlResults.key(seq, task), SspControlStates.write(states))

  /** Every task result recorded for batch `seq`, by task name. */
  def load(seq: Long): Seq[(String, States)] = {
    val prefix = s"$seq/"
    store.keys(namespace).filter(_.startsWith(prefix)).map { key =>
      val what = s"control results of batch $seq task '${key.substring(prefix.length)}' " +
        s"(metadata store $store, namespace '$namespace')"
      val text = store.get(namespace, key).getOrElse(throw StreamctlException(s"Missing $what"))
      key.substring(prefix.length) -> SspControlStates.parse(text, what)
    }
  }

  /**
   * The reconciled states after batch `ctl.seq`: the offset's states merged with what the readers
   * of that batch recorded. What the next batch is planned from, and what `streamctl describe`
   * shows.
   */
  def statesAfter(ctl: ControlState): States =
    SspControlStates.merge(ctl.states +: load(ctl.seq).map(_._2))

  def deleteBefore(seq: Long): Unit =
    store.keys(namespace).foreach { key =>
      if (ControlResults.seqOf(key).exists(_ < seq)) store.delete(namespace, key)
    }

  /**
   * Results of batches after `seq`: what a run that died mid-batch left (real-time readers record
   * as they read).
   */
  def deleteAfter(seq: Long): Unit =
    store.keys(namespace).foreach { key =>
      if (ControlResults.seqOf(key).exists(_ > seq)) store.delete(namespace, key)
    }

  def deleteAll(): Unit = store.keys(namespace).foreach(store.delete(namespace, _))
}

object ControlResults {
  def key(seq: Long, task: TaskName): String = s"$seq/${task.name}"

  private def seqOf(key: String): Option[Long] = key.split('/').headOption.flatMap(_.toLongOption)
}
