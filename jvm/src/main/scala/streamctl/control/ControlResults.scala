package streamctl
package control

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode

import streamctl.{Json, StreamctlException}
import streamctl.control.SspControlStates.States
import streamctl.metadata.MetadataStore
import streamctl.system.TaskName

/**
 * Where the readers' control bookkeeping of a batch waits for the driver's next planning, in the
 * source's namespace of the metadata store ([[streamctl.metadata.StoreLayout]]): the intermediate
 * SSP states of each task at the end of its ranges, for the tasks whose states the batch changed.
 * `seq` is the source's own batch counter (kept in the offset), so a replayed batch writes the same
 * keys again with the same content.
 *
 * A micro-batch's results are one value, key `<seq>`, holding every task's ([[putBatch]]): the
 * driver collects them from the readers ([[BatchResults]]) and writes them once, so a batch costs
 * one store write whatever its task count. A real-time reader records its own states as it reads,
 * key `<seq>/<task>` ([[put]], see [[ControlStatePublisher]]), since its batch has no end before
 * the driver needs them. [[load]] reads both.
 *
 * Nothing is written when no task changed its states: most batches carry no control message, and
 * the driver starts from the offset's states anyway.
 *
 * {{{
 * val results = new ControlResults(store, StoreLayout.Source("0").controlNamespace)
 * results.putBatch(7, Seq("Partition 2" -> states))  // driver, once the batch's readers reported
 * results.put(8, "Partition 2", states)               // a real-time reader, as it reads
 * results.load(7)                                     // driver: Seq("Partition 2" -> states)
 * results.deleteBefore(7)                             // once the offset log holds batch 7's start state
 * }}}
 */
final class ControlResults(store: MetadataStore, val namespace: String) {

  def put(seq: Long, task: TaskName, states: States): Unit =
    store.put(namespace, ControlResults.key(seq, task), SspControlStates.write(states))

  /**
   * Every task result of micro-batch `seq` as one value (tasks sorted: equal results, equal text).
   */
  def putBatch(seq: Long, results: Iterable[(String, States)]): Unit = {
    val node = Json.obj()
    results.toSeq.sortBy(_._1).foreach { case (task, states) =>
      node.set[JsonNode](task, SspControlStates.toJson(states))
    }
    store.put(namespace, seq.toString, Json.write(node))
  }

  /** Every task result recorded for batch `seq`, by task name. */
  def load(seq: Long): Seq[(String, States)] = {
    val prefix = s"$seq/"
    store.keys(namespace).filter(k => k.startsWith(prefix) || k == seq.toString).flatMap { key =>
      val where = s"(metadata store $store, namespace '$namespace')"
      def missing(what: String) = throw StreamctlException(s"Missing $what")
      if (key == seq.toString) {
        val what = s"control results of batch $seq $where"
        val node = Json.parse(store.get(namespace, key).getOrElse(missing(what)), what)
        node.properties.asScala.toSeq.map { e =>
          e.getKey -> SspControlStates.fromJson(e.getValue, s"$what, task '${e.getKey}'")
        }
      } else {
        val what = s"control results of batch $seq task '${key.substring(prefix.length)}' $where"
        val text = store.get(namespace, key).getOrElse(missing(what))
        Seq(key.substring(prefix.length) -> SspControlStates.parse(text, what))
      }
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
