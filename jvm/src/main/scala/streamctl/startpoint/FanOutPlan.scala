package streamctl.startpoint

import streamctl.system.{SSP, TaskName}

/**
 * What [[StartpointManager.fanOut]] will do, planned without writing: its `result`, which stored
 * key each task-level startpoint comes from (`origins`: what errors should name, since that is the
 * key the user wrote), and the copies to write.
 */
final case class FanOutPlan(
    result: FanOutResult,
    origins: Map[(SSP, TaskName), StartpointKey],
    copies: Seq[FanOutPlan.Copy]
) {

  /** The stored key the startpoint of `ssp` for `task` comes from. */
  def origin(key: (SSP, TaskName)): StartpointKey =
    origins.getOrElse(key, StartpointKey(key._1, key._2))
}

object FanOutPlan {

  /** The SSP-only startpoint at `key` (stored as `text`), copied to `tasks` and then deleted. */
  final case class Copy(key: StartpointKey, text: String, tasks: Seq[TaskName])
}
