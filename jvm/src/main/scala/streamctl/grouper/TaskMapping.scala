package streamctl.grouper

import streamctl.system.{SSP, TaskName}

/**
 * The SSP -> task mapping in force: the single source of truth for task names, recorded in the
 * metadata store and in the source's Offset each time it is computed.
 *
 * A broadcast SSP maps to every task; any other SSP maps to exactly one task.
 * `initialPartitionCounts` remembers, per stream, the partition count the job first saw: expansion
 * maps new partitions relative to it, so it must survive every restart. The task list is the key
 * set of `taskSsps` (a task without SSPs does not exist), which keeps the two from ever
 * disagreeing.
 *
 * {{{
 * val m = TaskMapping(Map("orders" -> 2),
 *   Map(TaskName("Partition 0") -> Set(SSP.kafka("orders", 0)),
 *       TaskName("Partition 1") -> Set(SSP.kafka("orders", 1))))
 * m.tasks                   // Vector(Partition 0, Partition 1)
 * m.partitionCount("orders") // 2
 * TaskMapping.fromJson(m.toJson, "example") == m
 * }}}
 */
final case class TaskMapping(
    initialPartitionCounts: Map[String, Int],
    taskSsps: Map[TaskName, Set[SSP]]
) {

  /** Every task, in [[TaskOrder]] (`Partition 2` before `Partition 10`). */
  lazy val tasks: IndexedSeq[TaskName] = taskSsps.keysIterator.toIndexedSeq.sorted(TaskOrder)

  /**
   * The tasks reading each SSP: one, or every task for a broadcast SSP. Derived on first use
   * because groupers, the JSON form and the planner's input partitions are all task-keyed.
   */
  lazy val sspTasks: Map[SSP, Set[TaskName]] = {
    // First assume no SSP is in two tasks (no broadcast stream), which needs no lookups;
    // fewer entries than occurrences proves otherwise, and only then are task sets merged.
    val b = Map.newBuilder[SSP, Set[TaskName]]
    var occurrences = 0
    for ((t, ssps) <- taskSsps) {
      val one = Set(t) // shared by every SSP of the task: 100,000 SSPs need not mean 100,000 sets
      ssps.foreach(ssp => b += ssp -> one)
      occurrences += ssps.size
    }
    val simple = b.result()
    if (simple.size == occurrences) simple
    else {
      val merged = scala.collection.mutable.HashMap.empty[SSP, Set[TaskName]]
      for ((t, ssps) <- taskSsps; ssp <- ssps)
        merged.update(ssp, merged.getOrElse(ssp, Set.empty[TaskName]) + t)
      merged.toMap
    }
  }

  /**
   * Per stream, one more than its highest mapped partition (Kafka numbers partitions from 0), and
   * at least its initial count: a mapping an `assign` query stored holds only the partitions it
   * reads, maybe none of the highest, and a stream never has fewer than it started with.
   */
  lazy val partitionCounts: Map[String, Int] = {
    val b = scala.collection.mutable.HashMap.empty[String, Int]
    for (ssps <- taskSsps.valuesIterator; ssp <- ssps)
      b.update(ssp.stream, math.max(b.getOrElse(ssp.stream, 0), ssp.partition + 1))
    for ((stream, n) <- initialPartitionCounts if b.contains(stream))
      b.update(stream, math.max(b(stream), n))
    b.toMap
  }

  def ssps: Set[SSP] = sspTasks.keySet

  /** Tasks reading `ssp`; empty when it is not mapped. */
  def tasksOf(ssp: SSP): Set[TaskName] = sspTasks.getOrElse(ssp, Set.empty)

  def partitionCount(stream: String): Int = partitionCounts.getOrElse(stream, 0)

  /**
   * SSPs mapped here and not in `previous`: the planner starts them from their beginning, which is
   * what keeps records written to a new partition right after expansion.
   */
  def addedSince(previous: Option[TaskMapping]): Set[SSP] = previous match {
    case Some(p) => ssps.filterNot(p.sspTasks.contains)
    case None => ssps
  }

  def toJson: String = TaskMappingJson.write(this)
}

object TaskMapping {
  val empty: TaskMapping = TaskMapping(Map.empty, Map.empty)

  /**
   * Reads what [[TaskMapping.toJson]] wrote; `what` names the origin (store key, batch) in errors.
   */
  def fromJson(text: String, what: String): TaskMapping = TaskMappingJson.read(text, what)
}
