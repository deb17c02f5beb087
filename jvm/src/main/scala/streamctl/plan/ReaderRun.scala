package streamctl.plan

import streamctl.system.TaskName

/**
 * One task read on one executor: where it ran, and whether the executor's consumer pool had a
 * consumer for it.
 */
final case class ReaderRun(task: TaskName, executorId: String, consumerReused: Boolean)
