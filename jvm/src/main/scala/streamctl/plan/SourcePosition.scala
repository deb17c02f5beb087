package streamctl.plan

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode

import streamctl.Json
import streamctl.grouper.TaskName
import streamctl.system.SSP

/**
 * Where a streamctl source is: what Spark writes in the query's offset log for it (wrapped by
 * `spark.SourceOffset`). For every task, the next offset to read of each of its SSPs (so the
 * SSP -> task mapping in force is part of it), and every other piece of state that must survive
 * a crash together with those offsets ([[SourceState]]: control bookkeeping, applied
 * startpoints, ...). A batch replayed after a crash is planned from this alone, so it reads the
 * same records and reaches the same state.
 *
 * Positions are per task because one SSP can be read by several tasks (broadcast streams),
 * each from its own position (a task-level startpoint moves only that task).
 *
 * `starts` holds, for the batch that ends at this position, where it begins for the task SSPs
 * whose beginning is not the previous position: a startpoint moved it, or the SSP is new
 * (partition expansion). Recording it here, in the batch's own end offset, is what makes a
 * replay after a crash read the same records.
 *
 * The JSON is deterministic (sorted keys): Spark decides "no new data" by comparing offsets, so
 * equal content gives equal text; and it is exactly what streamctl wrote before the state was
 * typed, so checkpoints written then restart (see `tests/data/checkpoint-08f2737`).
 *
 * {{{
 * {"version":1,"tasks":{"Partition 0":{"kafka/orders/0":42}},"state":{}}
 * }}}
 */
final case class SourcePosition(
    tasks: Map[TaskName, Map[SSP, Long]],
    state: SourceState = SourceState.empty,
    starts: Map[TaskName, Map[SSP, Long]] = Map.empty) {

  lazy val json: String = {
    val root = Json.obj()
    root.put("version", SourcePosition.Version)
    def positions(name: String, of: Map[TaskName, Map[SSP, Long]]): Unit = {
      val t = root.putObject(name)
      of.toSeq.sortBy(_._1).foreach { case (task, ps) =>
        val p = t.putObject(task.name)
        ps.toSeq.sortBy(_._1).foreach { case (ssp, o) => p.put(ssp.key, o) }
      }
    }
    positions("tasks", tasks)
    if (starts.nonEmpty) positions("starts", starts)
    SourceState.write(state, root.putObject("state"))
    Json.write(root)
  }

  def withState(f: SourceState => SourceState): SourcePosition = copy(state = f(state))

  /** Where the batch ending here begins for `task`'s `ssp`, given the previous position. */
  def startOf(previous: SourcePosition, task: TaskName, ssp: SSP): Option[Long] =
    starts.get(task).flatMap(_.get(ssp)).orElse(previous.tasks.get(task).flatMap(_.get(ssp)))

  lazy val ssps: Set[SSP] = tasks.values.flatMap(_.keys).toSet

  /** The least position of each SSP over the tasks that read it. */
  lazy val minPositions: Map[SSP, Long] = tasks.values.flatten.groupMapReduce(_._1)(_._2)(math.min)
}

object SourcePosition {
  /** The format version written; see [[StateCodec]] for how the states are versioned by it. */
  val Version = 1

  def parse(json: String): SourcePosition = {
    val what = "the streamctl offset in the query checkpoint"
    val root = Json.parse(json, what)
    Json.version(root, Version, what)
    def positions(node: JsonNode): Map[TaskName, Map[SSP, Long]] = node.properties().asScala.map { e =>
      TaskName(e.getKey) -> e.getValue.properties().asScala.map(p => SSP.parse(p.getKey) -> p.getValue.asLong()).toMap
    }.toMap
    SourcePosition(
      positions(Json.field(root, "tasks", what)),
      Option(root.get("state")).fold(SourceState.empty)(SourceState.read(_, what)),
      Option(root.get("starts")).map(positions).getOrElse(Map.empty))
  }
}
