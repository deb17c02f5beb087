package streamctl
package locality

import streamctl.system.TaskName

/**
 * Where each task runs: task -> executor, as computed by [[StickyAssigner]] and kept in the
 * metadata store between batches and across restarts.
 *
 * `homes` is the assigner's memory of lost executors: a task that had to leave an executor because
 * it was lost remembers it here, and when an executor with the same id and host is live again the
 * task goes back to it the next time balancing moves tasks anyway. An entry is dropped once the
 * task is back home; there is at most one per task, so it stays small.
 *
 * `settled` are the tasks among those that took a home elsewhere since: placed on their executor by
 * a rebalance (a replacement executor taking them in), not by the loss. They still go home when
 * their executor returns, but when another executor is lost and a replacement joins, the tasks that
 * loss displaced (guests) leave first and the settled ones stay where they are warm.
 *
 * {{{
 * val a = ExecutorId("1", "host-a")
 * val l = TaskLocality(Map(TaskName("Partition 0") -> a))
 * l.preferredLocations(TaskName("Partition 0")) // Array("executor_host-a_1")
 * l.preferredLocations(TaskName("Partition 9")) // Array(): no preference
 * }}}
 */
final case class TaskLocality(
    placement: Map[TaskName, ExecutorId],
    homes: Map[TaskName, ExecutorId] = Map.empty,
    settled: Set[TaskName] = Set.empty
) {

  /** Displaced by a loss and not settled since: what a replacement executor takes in first. */
  def isGuest(task: TaskName): Boolean = homes.contains(task) && !settled(task)

  def executorOf(task: TaskName): Option[ExecutorId] = placement.get(task)

  /**
   * What an input partition returns from `preferredLocations()`; empty when the task has no
   * executor.
   */
  def preferredLocations(task: TaskName): Array[String] =
    placement.get(task).map(_.location).toArray

  /** Number of tasks on each executor that has at least one. */
  def loads: Map[ExecutorId, Int] = placement.groupBy(_._2).view.mapValues(_.size).toMap

  /** Sorted, stable JSON: the same locality always writes the same text. */
  def toJson: String = LocalityJson.write(this)
}

object TaskLocality {
  val empty: TaskLocality = TaskLocality(Map.empty, Map.empty, Set.empty)

  /**
   * Reads [[TaskLocality.toJson]] output; `key` (the metadata store key) is named in every error.
   */
  def fromJson(text: String, key: String): TaskLocality = LocalityJson.read(text, key)
}
