package streamctl.startpoint

import streamctl.system.{SSP, TaskName}

/**
 * What [[StartpointManager.fanOut]] leaves for the query to apply.
 *
 * @param startpoints
 *   every task-level startpoint of the current SSP -> task mapping, i.e. what the next batch must
 *   start from instead of the checkpoint
 * @param unassigned
 *   startpoints no current task reads: SSP-only ones for an SSP outside the query (left in the
 *   store, so a later mapping can still pick them up), and task-level ones of a task that no longer
 *   reads that SSP. The caller decides whether that is an error ("stream the query does not read").
 */
final case class FanOutResult(
    startpoints: Map[(SSP, TaskName), Startpoint],
    unassigned: Seq[StoredStartpoint]
)
