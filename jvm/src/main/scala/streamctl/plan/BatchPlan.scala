package streamctl
package plan

import streamctl.system.{SSP, TaskName}

/**
 * The batch being planned, as the [[PlanningStep]]s pass it along: where each task's SSPs begin,
 * the state the end offset will carry, and, as the chain learns them, the broker's heads and where
 * each SSP ends. Starts as "every SSP begins where the previous batch ended, state unchanged".
 *
 * {{{
 * val plan = BatchPlan(previous).begin(TaskName("Partition 0"), ssp, 42L)
 * val end = plan.copy(heads = heads, ends = Map(ssp -> 142L)).end
 * }}}
 *
 * @param heads
 *   per SSP, the offset the next written record will get (the step that asks Kafka sets it)
 * @param held
 *   SSPs that may not be read in this batch (partitions held by an expansion)
 * @param ends
 *   per SSP, where the batch ends (admission sets it); an SSP without one reads nothing
 * @param skippedAhead
 *   task SSPs whose beginning moved only forward past records gone from the broker (a retention gap
 *   skipped): the stream itself goes on there, so what was read of it before still describes it,
 *   unlike a beginning a startpoint moved
 */
final case class BatchPlan(
    previous: SourcePosition,
    begins: Map[TaskName, Map[SSP, Long]],
    state: SourceState,
    heads: Map[SSP, Long] = Map.empty,
    held: Set[SSP] = Set.empty,
    ends: Map[SSP, Long] = Map.empty,
    skippedAhead: Set[(TaskName, SSP)] = Set.empty
) {

  /** Makes `task` read `ssp` from `offset` in this batch (a new SSP, or a moved beginning). */
  def begin(task: TaskName, ssp: SSP, offset: Long): BatchPlan =
    copy(begins = begins.updated(task, begins.getOrElse(task, Map.empty).updated(ssp, offset)))

  def withState(f: SourceState => SourceState): BatchPlan = copy(state = f(state))

  /**
   * Task SSPs of the end's `starts` that begin elsewhere than the stream went on
   * ([[skippedAhead]]).
   */
  def restarted(end: SourcePosition): Iterator[SSP] = end.starts.iterator.flatMap { case (t, ps) =>
    ps.keysIterator.filterNot(s => skippedAhead.contains(t -> s))
  }

  // Most batches begin exactly where the previous one ended (`begins` is then the previous
  // position's own map): its SSPs and least positions, computed once, serve every step.
  lazy val ssps: Set[SSP] =
    if (begins eq previous.tasks) previous.ssps else begins.values.flatMap(_.keys).toSet

  /** The least beginning of each SSP over the tasks that read it. */
  lazy val minBegins: Map[SSP, Long] =
    if (begins eq previous.tasks) previous.minPositions
    else begins.values.flatten.groupMapReduce(_._1)(_._2)(math.min)

  /**
   * What each SSP may be read up to in this batch before the budget is shared: its head, capped by
   * the `Trigger.AvailableNow` target (an SSP missing from the target appeared after the query
   * started: it had nothing to read then); a held SSP ends where it begins.
   */
  def reachable(availableNowTarget: Option[Map[SSP, Long]]): Map[SSP, Long] =
    heads.transform { (s, h) =>
      val capped = availableNowTarget.fold(h)(t => math.min(h, t.getOrElse(s, 0L)))
      if (held.contains(s)) math.min(capped, minBegins.getOrElse(s, capped)) else capped
    }

  /**
   * The end offset: every task SSP ends at [[ends]] (never before it begins), except one whose head
   * is behind its beginning (records gone, only with `failOnDataLoss=false`), which continues from
   * the broker's end; and the beginnings that differ from `previous`.
   */
  def end: SourcePosition = planned

  // Asked by more than one step (control needs it, then the planner): made once per plan.
  private lazy val planned: SourcePosition = end { (_, ssp, begin) =>
    heads.get(ssp) match {
      case Some(h) if h < begin => h
      case _ => math.max(begin, ends.getOrElse(ssp, begin))
    }
  }

  /** The end offset with each task SSP's end from `endOf(task, ssp, begin)`. */
  def end(endOf: (TaskName, SSP, Long) => Long): SourcePosition = {
    // transform keeps the maps' shape: no key is hashed again.
    val positions = begins.transform((t, ps) => ps.transform((s, b) => endOf(t, s, b)))
    val moved =
      if (begins eq previous.tasks) Map.empty[TaskName, Map[SSP, Long]]
      else begins.flatMap { case (t, ps) =>
        val before = previous.tasks.getOrElse(t, Map.empty[SSP, Long])
        if (ps eq before) None
        else {
          val m = ps.filter { case (s, b) => !before.get(s).contains(b) }
          if (m.isEmpty) None else Some(t -> m)
        }
      }
    SourcePosition(positions, state, moved)
  }
}

object BatchPlan {
  def apply(previous: SourcePosition): BatchPlan =
    BatchPlan(previous, previous.tasks, previous.state)
}
