package streamctl.grouper

import streamctl.system.{SSP, TaskName}

/**
 * Grouper `single`: every SSP in one task, `Task 0`, for jobs that need to see everything in one
 * place (a global order, a small reference join). SSPs already in `previous` stay where they are,
 * so switching an existing job to this grouper moves no SSP; only SSPs new to the job land in
 * `Task 0`.
 *
 * {{{
 * new AllSspToSingleTask().group(Map.empty, Set(SSP.kafka("a", 0), SSP.kafka("b", 1)))
 * // Map(Task 0 -> Set(a-0, b-1))
 * }}}
 */
class AllSspToSingleTask extends SystemStreamPartitionGrouper {
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    ssps.groupBy(ssp => previous.getOrElse(ssp, AllSspToSingleTask.Task))
}

object AllSspToSingleTask {
  val Task: TaskName = TaskName("Task 0")
}
