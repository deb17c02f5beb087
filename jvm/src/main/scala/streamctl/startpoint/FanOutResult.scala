package streamctl.startpoint

import streamctl.system.{SSP, TaskName}

/**
 * What [[StartpointManager.fanOut]] leaves for the query to apply.
 *
 * @param startpoints every task-level startpoint of the current SSP -> task mapping, i.e.
 *                    what the next batch must start from instead of the checkpoint
 * @param unassigned  startpoints no current task reads: SSP-only ones for an SSP outside the
 *                    query (left in the store, so a later mapping can still pick them up),
 *                    and task-level ones of a task that no longer reads that SSP. The caller
 *                    decides whether that is an error ("stream the query does not read").
 */
final case class FanOutResult(startpoints: Map[(SSP, TaskName), Startpoint], unassigned: Seq[StoredStartpoint])

/**
 * What [[StartpointManager.fanOut]] will do, planned without writing: its `result`, which
 * stored key each task-level startpoint comes from (`origins`: what errors should name, since
 * that is the key the user wrote), and the copies to write.
 */
final case class FanOutPlan(result: FanOutResult, origins: Map[(SSP, TaskName), StartpointKey], copies: Seq[FanOutPlan.Copy]) {
  /** The stored key the startpoint of `ssp` for `task` comes from. */
  def origin(key: (SSP, TaskName)): StartpointKey = origins.getOrElse(key, StartpointKey(key._1, key._2))
}

object FanOutPlan {
  /** The SSP-only startpoint at `key` (stored as `text`), copied to `tasks` and then deleted. */
  final case class Copy(key: StartpointKey, text: String, tasks: Seq[TaskName])
}
