package streamctl.locality

import streamctl.system.TaskName

/**
 * The result of one rebalance: the new locality, and the tasks that had an executor before and now
 * have a different one. Tasks placed for the first time are not moves, and with no live executor
 * nothing is placed, so nothing moves.
 *
 * {{{
 * val a = StickyAssigner.assign(previous, tasks, executors)
 * a.moved.size // the "tasks moved in the last rebalance" metric
 * }}}
 */
final case class Assignment(locality: TaskLocality, moved: Set[TaskName])
