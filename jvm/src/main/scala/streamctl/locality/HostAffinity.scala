package streamctl.locality

import streamctl.config.OptionSpec
import streamctl.plan.ReaderReports
import streamctl.system.TaskName

/**
 * Host affinity at batch planning: each batch, the tasks are assigned to the live executors,
 * sticking to the previous assignment (kept in the metadata store), and each task's input partition
 * prefers its executor. With `host.affinity=false` nothing is assigned or stored and no task has a
 * preferred location.
 *
 * It also turns the readers' reports ([[ReaderReports]]) into progress metrics, of the last batch
 * planned: `consumersCreated` and `consumersReused` always; with host affinity also `executors`
 * (live, the driver excluded), `tasksMoved` (tasks whose executor changed when the batch was
 * planned) and `tasksOffAssignedExecutor` (tasks Spark ran elsewhere, e.g. after
 * `spark.locality.wait`).
 *
 * Spark plans a batch's partitions again for every action on it (`foreachBatch` may run several),
 * so a batch is known by its end offset: planning it again re-assigns (executors may have changed
 * meanwhile) and adds to its moves and runs instead of starting afresh.
 *
 * {{{
 * val affinity = new HostAffinity(enabled = true, () => registry.live, () => localityStore, reports)
 * val locality = affinity.plan(end.json, tasks) // in planInputPartitions
 * locality.preferredLocations(task)         // Array("executor_10.0.0.2_1")
 * affinity.metrics                          // in metrics(): Map("tasksMoved" -> "0", ...)
 * }}}
 */
final class HostAffinity(
    enabled: Boolean,
    executors: () => Seq[ExecutorId],
    store: () => TaskLocalityStore,
    reports: ReaderReports
) {

  // Only this source writes its key, so the last saved assignment is the stored one.
  @volatile private var saved: Option[TaskLocality] = None
  @volatile private var last =
    HostAffinity.Planned("", TaskLocality.empty, executors = 0, moved = 0)
  // The locality the next batch starts from, with the tasks and live executors it was assigned for.
  @volatile private var lastAssigned: Option[(Seq[TaskName], Seq[ExecutorId], TaskLocality)] = None

  /**
   * Assigns `tasks` (every task of the batch, idle ones too, so they keep their place) for the
   * batch ending at `batch` (its end offset's JSON).
   */
  def plan(batch: String, tasks: Seq[TaskName]): TaskLocality = synchronized {
    val sameBatch = last.batch == batch
    if (!sameBatch) reports.clear()
    if (!enabled) {
      last = HostAffinity.Planned(batch, TaskLocality.empty, 0, 0)
      return TaskLocality.empty
    }
    val previous = saved.getOrElse(store().loadPreference())
    val live = executors()
    // The assignment is a function of its inputs, which stay the same from batch to batch until
    // a task or an executor comes or goes: then it is not worked out again for thousands of tasks.
    // An assignment is its own fixed point (StickyAssignerPropertyTest): assigned again to the same
    // tasks and executors, the locality saved last comes back with nothing moved.
    val assignment = lastAssigned match {
      case Some((t, l, p)) if (p eq previous) && l == live && t == tasks => Assignment(p, Set.empty)
      case _ => StickyAssigner.assign(previous, tasks, live)
    }
    // Kept as it is when unchanged, so that the next batch finds the same inputs above.
    if (!saved.contains(assignment.locality)) {
      store().save(assignment.locality)
      saved = Some(assignment.locality)
    }
    lastAssigned = saved.map((tasks, live, _))
    val moved = assignment.moved.size + (if (sameBatch) last.moved else 0)
    last = HostAffinity.Planned(batch, assignment.locality, live.size, moved)
    assignment.locality
  }

  def metrics: Map[String, String] = {
    val done = reports.runs
    val consumers = Map(
      "consumersCreated" -> done.count(!_.consumerReused).toString,
      "consumersReused" -> done.count(_.consumerReused).toString
    )
    if (!enabled) consumers
    else {
      val planned = last
      val off = done.count(r => planned.locality.executorOf(r.task).exists(_.id != r.executorId))
      consumers ++ Map(
        "executors" -> planned.executors.toString,
        "tasksMoved" -> planned.moved.toString,
        "tasksOffAssignedExecutor" -> off.toString
      )
    }
  }
}

object HostAffinity {

  /** Option `host.affinity`. */
  val Enabled: OptionSpec[Boolean] = OptionSpec.bool(
    "host.affinity",
    "keep each task on the executor it ran on before",
    default = true
  )

  private final case class Planned(
      batch: String,
      locality: TaskLocality,
      executors: Int,
      moved: Int
  )
}
