package streamctl.planner

import streamctl.control.TaskControl
import streamctl.system.{SSP, SspRange, TaskName}

/**
 * One task's read in one batch, as the planner hands it to an executor: the SSP ranges it reads,
 * where it would like to run, the start-time head of each bootstrap SSP it reads (for its chooser),
 * its in-band control start, and the Kafka topic ID the planner knows for each stream it reads
 * (records a reader kept from an earlier batch serve only the same incarnation of a topic: a topic
 * deleted and created again reuses its offsets).
 */
final case class TaskRead(
    task: TaskName,
    ranges: Seq[SspRange],
    locations: Array[String],
    bootstrapHeads: Map[SSP, Long] = Map.empty,
    control: Option[TaskControl] = None,
    streamIds: Map[String, String] = Map.empty
)

object TaskRead {

  /**
   * The SSPs more than one of `reads` reads (a broadcast stream's): each reader stands at its own
   * position there, so no one reader says where the query is.
   */
  def readBySeveral(reads: Seq[TaskRead]): Set[SSP] =
    reads.flatMap(_.ranges.map(_.ssp).distinct).groupBy(identity).collect {
      case (ssp, readers) if readers.size > 1 => ssp
    }.toSet

  /** Of the topic IDs `ids`, those of the streams `ranges` read. */
  def streamIdsOf(ids: Map[String, String], ranges: Seq[SspRange]): Map[String, String] =
    if (ids.isEmpty) Map.empty
    else ranges.iterator.map(_.ssp.stream).flatMap(s => ids.get(s).map(s -> _)).toMap
}
