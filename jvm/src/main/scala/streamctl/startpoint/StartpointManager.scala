package streamctl.startpoint

import scala.collection.mutable

import org.slf4j.LoggerFactory

import streamctl.StreamctlException
import streamctl.metadata.{MetadataStore, StoreKeys, StoreLayout}
import streamctl.system.{SSP, TaskName}

/**
 * Reads and writes startpoints in the metadata store (namespace `startpoints`, keys as in
 * [[StartpointKey]], values as in [[StartpointJson]]) and carries out their life cycle:
 *
 *   1. a user (CLI, Python) writes a startpoint for an SSP or for an SSP and a task;
 *   2. at query start, [[fanOut]] copies each SSP-only startpoint to every task reading the SSP,
 *      keeping task-level ones already there that were written later (the latest request for a
 *      task's view of an SSP wins), then removes the SSP-only key unless it was rewritten
 *      meanwhile;
 *   3. the query resolves and applies the task-level startpoints in its next batch;
 *   4. once that batch has committed, [[removeFannedOut]] deletes them. A crash before the commit
 *      leaves them in place, so the replayed batch applies them again.
 *
 * {{{
 * val manager = new StartpointManager(store)
 * manager.write(SSP.kafka("orders", 3), Startpoint.oldest())
 * val fanned = manager.fanOut(Map(TaskName("Partition 3") -> Set(SSP.kafka("orders", 3))))
 * // ... batch planned from fanned.startpoints commits ...
 * manager.removeFannedOut(fanned.startpoints)
 * }}}
 */
class StartpointManager(store: MetadataStore) {
  private val Namespace = StoreLayout.StartpointsNamespace

  def write(ssp: SSP, startpoint: Startpoint): Unit = write(StartpointKey(ssp), startpoint)
  def write(ssp: SSP, task: TaskName, startpoint: Startpoint): Unit =
    write(StartpointKey(ssp, task), startpoint)
  def write(key: StartpointKey, startpoint: Startpoint): Unit =
    store.put(Namespace, key.storeKey, StartpointJson.write(startpoint))

  def read(ssp: SSP): Option[Startpoint] = read(StartpointKey(ssp))
  def read(ssp: SSP, task: TaskName): Option[Startpoint] = read(StartpointKey(ssp, task))
  def read(key: StartpointKey): Option[Startpoint] = readStoreKey(key.storeKey)

  def delete(ssp: SSP): Unit = delete(StartpointKey(ssp))
  def delete(ssp: SSP, task: TaskName): Unit = delete(StartpointKey(ssp, task))
  def delete(key: StartpointKey): Unit = deleteStoreKey(key.storeKey)

  /** Deletes a key as stored, canonical or not (see [[StartpointKey.parse]]). */
  private[startpoint] def deleteStoreKey(storeKey: String): Unit = store.delete(Namespace, storeKey)

  /** Every stored startpoint, SSP-only and task-level, sorted by store key. */
  def list(): Seq[StoredStartpoint] = readAll().map(_._2)

  /**
   * Step 2 of the life cycle, for the query's current SSP -> task mapping (given as the grouper's
   * task -> SSPs): [[planFanOut]], then [[applyFanOut]]. Idempotent and crash-safe: each SSP's
   * task-level copies are written before its SSP-only key is deleted, and an existing task-level
   * key is overwritten only by a later-written startpoint (a copy keeps its creation time), so a
   * run interrupted anywhere and run again ends in the same state with the same result.
   */
  def fanOut(taskToSsps: Map[TaskName, Set[SSP]]): FanOutResult =
    applyFanOut(planFanOut(taskToSsps))

  /**
   * What [[fanOut]] would write and return, computed without writing anything: every stored
   * startpoint is read and parsed first, so a corrupt one fails with nothing moved, and a caller
   * can check (resolve) the outcome before the store changes.
   */
  def planFanOut(taskToSsps: Map[TaskName, Set[SSP]]): FanOutPlan = {
    val readers = readersOf(taskToSsps)
    val stored = readAll()
    val taskLevel = stored.iterator.collect {
      case (_, StoredStartpoint(StartpointKey(ssp, Some(t)), sp)) => (ssp, t) -> sp.creationTimeMs
    }.toMap
    /* A task-level startpoint written before the SSP-only one gives way to it: the later request
     * wins. That is also what tells a copy an earlier run left (the run failed before its batch was
     * logged, so the copy was never applied) from a newer partition-level request. */
    def keeps(ssp: SSP, task: TaskName, startpoint: Startpoint) =
      taskLevel.get((ssp, task)).exists(_ >= startpoint.creationTimeMs)
    val fresh = Map.newBuilder[(SSP, TaskName), Startpoint]
    val origins = Map.newBuilder[(SSP, TaskName), StartpointKey]
    val copies = Vector.newBuilder[FanOutPlan.Copy]
    val unassigned = Vector.newBuilder[StoredStartpoint]

    stored.foreach {
      case (text, found @ StoredStartpoint(key @ StartpointKey(ssp, None), startpoint)) =>
        readers.get(ssp) match {
          case None => unassigned += found
          case Some(tasks) =>
            val to = tasks.filterNot(task => keeps(ssp, task, startpoint))
            to.foreach { task =>
              fresh += (ssp, task) -> startpoint
              origins += (ssp, task) -> key
            }
            copies += FanOutPlan.Copy(key, text, to)
        }
      case _ =>
    }

    val copied = fresh.result()
    val existing = taskLevelOf(stored, readers)
    // Those a later SSP-only startpoint replaces are copied over.
    val kept = existing.startpoints -- copied.keySet
    kept.keysIterator.foreach { case k @ (ssp, task) =>
      origins += k -> StartpointKey(ssp, task)
    }
    FanOutPlan(
      FanOutResult(
        copied ++ kept,
        unassigned.result() ++ existing.unassigned
      ),
      origins.result(),
      copies.result()
    )
  }

  /**
   * Writes what `plan` planned: each SSP-only startpoint's task-level copies, then its key's
   * deletion. Every copy's key is checked before the first write.
   */
  def applyFanOut(plan: FanOutPlan): FanOutResult = {
    /* A task-level key is longer than its SSP-only one: a long topic's may not fit the store even
     * though the user's key did. Unchecked, fan-out would stop half-way, and again at every start. */
    val writes = plan.copies.map { c =>
      c -> c.tasks.map { task =>
        val key = StartpointKey(c.key.ssp, task)
        try checkWritable(key)
        catch {
          case e: StreamctlException => throw StreamctlException(
              s"The startpoint at key '${c.key.storeKey}' (stream '${c.key.ssp.stream}') cannot be copied to task '$task', " +
                s"which reads it: ${e.getMessage}. Delete it: this partition's startpoints cannot be stored per task",
              e
            )
        }
        key.storeKey
      }
    }
    val parse = new Parser
    writes.foreach { case (c, keys) =>
      // The stored text verbatim: the copy keeps the user's creation time.
      keys.foreach(store.put(Namespace, _, c.text))
      if (deleteIfStill(c.key.storeKey, parse(c.key.storeKey, c.text), parse))
        StartpointManager.log.info(
          s"Kept the startpoint at key '${c.key.storeKey}': it was rewritten while the query copied it to the " +
            "tasks reading it, so this run applies the value it copied and the new one is applied at the next restart"
        )
    }
    plan.result
  }

  /**
   * Step 4: deletes the task-level startpoints a committed batch applied. A key whose startpoint
   * changed since (a user wrote a new one meanwhile) is kept, so the new request is not lost; those
   * keys are returned.
   */
  def removeFannedOut(applied: Map[(SSP, TaskName), Startpoint]): Set[(SSP, TaskName)] = {
    val changed = Set.newBuilder[(SSP, TaskName)]
    val parse = new Parser
    applied.foreach { case ((ssp, task), startpoint) =>
      if (deleteIfStill(StartpointKey(ssp, task).storeKey, startpoint, parse))
        changed += ((ssp, task))
    }
    changed.result()
  }

  /**
   * Deletes `storeKey` if it still holds `expected`, value and creation time, and says whether it
   * was kept because it does not. A user may rewrite a key between the read that planned its
   * deletion and the deletion; deleting it anyway would drop their request unapplied. A value that
   * no longer parses is kept too: it is not what was applied, and the next start names it. What a
   * rewrite in the instant between this read and the delete does is the store's to order.
   */
  private def deleteIfStill(storeKey: String, expected: Startpoint, parse: Parser): Boolean =
    store.get(Namespace, storeKey) match {
      case None => false
      case Some(text) =>
        val same =
          try parse(storeKey, text) == expected
          catch { case _: StreamctlException => false }
        if (same) store.delete(Namespace, storeKey)
        !same
    }

  /**
   * Refuses a key the store would refuse ([[StoreKeys.validateKey]]: too long once encoded, control
   * characters), so that a writer of several keys can check them all before writing the first.
   */
  private[startpoint] def checkWritable(key: StartpointKey): Unit =
    StoreKeys.validateKey(Namespace, key.storeKey)

  /** The startpoint stored under a key as stored, canonical or not. */
  private[startpoint] def readStoreKey(storeKey: String): Option[Startpoint] =
    store.get(Namespace, storeKey).map(text =>
      StartpointJson.read(text, StartpointManager.describeKey(storeKey))
    )

  private def readersOf(taskToSsps: Map[TaskName, Set[SSP]]): Map[SSP, Seq[TaskName]] = {
    val readers = mutable.HashMap.empty[SSP, mutable.ArrayBuffer[TaskName]]
    taskToSsps.foreach { case (task, ssps) =>
      ssps.foreach(ssp => readers.getOrElseUpdate(ssp, mutable.ArrayBuffer.empty) += task)
    }
    readers.iterator.map { case (ssp, tasks) => ssp -> tasks.sorted.toSeq }.toMap
  }

  /** Every stored startpoint with its stored text; corrupt ones fail here, naming the key. */
  private def readAll(): Seq[(String, StoredStartpoint)] = {
    val parse = new Parser
    store.keys(Namespace).flatMap { k =>
      val key = StartpointKey.parse(k)
      store.get(Namespace, k).map(text => text -> StoredStartpoint(key, parse(k, text)))
    }
  }

  private def taskLevelOf(
      stored: Seq[(String, StoredStartpoint)],
      readers: Map[SSP, Seq[TaskName]]
  ): FanOutResult = {
    lazy val current = readers.iterator.flatMap { case (ssp, tasks) =>
      tasks.iterator.map(t => (ssp, t))
    }.toSet
    val found = Map.newBuilder[(SSP, TaskName), Startpoint]
    val unassigned = Vector.newBuilder[StoredStartpoint]
    stored.foreach {
      case (_, s @ StoredStartpoint(StartpointKey(ssp, Some(task)), startpoint)) =>
        if (current.contains((ssp, task))) found += (ssp, task) -> startpoint else unassigned += s
      case _ =>
    }
    FanOutResult(found.result(), unassigned.result())
  }

  /**
   * Parses stored JSON, once per distinct text: a broadcast SSP's copies for hundreds of tasks
   * share one text, and parsing dominates fan-out time otherwise.
   */
  private final class Parser {
    private val cache = mutable.HashMap.empty[String, Startpoint]
    def apply(storeKey: String, text: String): Startpoint =
      cache.getOrElseUpdate(
        text,
        StartpointJson.read(text, StartpointManager.describeKey(storeKey))
      )
  }
}

object StartpointManager {
  private val log = LoggerFactory.getLogger(classOf[StartpointManager])

  private def describeKey(storeKey: String): String =
    s"metadata store key '$storeKey' (namespace '${StoreLayout.StartpointsNamespace}')"
}
