package streamctl.spark

import com.fasterxml.jackson.databind.JsonNode

import streamctl.grouper.TaskName
import streamctl.system.SSP

/**
 * The batch being planned: where each task's SSPs begin, and the state the end offset will
 * carry. Starts as "every SSP begins where the previous batch ended, state unchanged"; the
 * planning steps (grouping, startpoints, control, admission) adjust it.
 *
 * {{{
 * val plan = BatchPlan(previous).begin(TaskName("Partition 0"), ssp, 42L)
 * val end = plan.end((task, ssp, begin) => begin + 100)
 * }}}
 */
final case class BatchPlan(previous: SourceOffset, begins: Map[TaskName, Map[SSP, Long]], state: Map[String, JsonNode]) {

  /** Makes `task` read `ssp` from `offset` in this batch (a new SSP, or a moved beginning). */
  def begin(task: TaskName, ssp: SSP, offset: Long): BatchPlan =
    copy(begins = begins.updated(task, begins.getOrElse(task, Map.empty).updated(ssp, offset)))

  def withState(key: String, value: JsonNode): BatchPlan = copy(state = state.updated(key, value))

  lazy val ssps: Set[SSP] = begins.values.flatMap(_.keys).toSet

  /** The least beginning of each SSP over the tasks that read it. */
  lazy val minBegins: Map[SSP, Long] = begins.values.flatten.groupMapReduce(_._1)(_._2)(math.min)

  /** The end offset: positions from `endOf(task, ssp, begin)`, and the beginnings that differ from `previous`. */
  def end(endOf: (TaskName, SSP, Long) => Long): SourceOffset = {
    val ends = begins.map { case (t, ps) => t -> ps.map { case (s, b) => s -> endOf(t, s, b) } }
    val moved = begins.map { case (t, ps) =>
      t -> ps.filter { case (s, b) => !previous.tasks.get(t).flatMap(_.get(s)).contains(b) }
    }.filter(_._2.nonEmpty)
    SourceOffset(ends, state, moved)
  }
}

object BatchPlan {
  def apply(previous: SourceOffset): BatchPlan = BatchPlan(previous, previous.tasks, previous.state)
}
