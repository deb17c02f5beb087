package streamctl.spark

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.apache.spark.sql.connector.read.streaming.Offset

import streamctl.{Json, StreamctlException}
import streamctl.grouper.TaskName
import streamctl.system.SSP

/**
 * What Spark writes in the query's offset log for a streamctl source: for every task, the
 * next offset to read of each of its SSPs (so the SSP -> task mapping in force is part of
 * it), and every other piece of state that must survive a crash together with those
 * offsets (`state`, one JSON value per feature: control bookkeeping, applied startpoints,
 * ...). A batch replayed after a crash is planned from this alone, so it reads the same
 * records and reaches the same state.
 *
 * Positions are per task because one SSP can be read by several tasks (broadcast streams),
 * each from its own position (a task-level startpoint moves only that task).
 *
 * `starts` holds, for the batch that ends at this offset, where it begins for the task SSPs
 * whose beginning is not the previous offset's position: a startpoint moved it, or the SSP
 * is new (partition expansion). Recording it here, in the batch's own end offset, is what
 * makes a replay after a crash read the same records.
 *
 * The JSON is deterministic (sorted keys): Spark decides "no new data" by comparing
 * offsets, so equal content must give equal text.
 *
 * {{{
 * {"version":1,"tasks":{"Partition 0":{"kafka/orders/0":42}},"state":{}}
 * }}}
 */
final case class SourceOffset(
    tasks: Map[TaskName, Map[SSP, Long]],
    state: Map[String, JsonNode] = Map.empty,
    starts: Map[TaskName, Map[SSP, Long]] = Map.empty) extends Offset {

  override lazy val json: String = {
    val root = Json.obj()
    root.put("version", SourceOffset.Version)
    val t = root.putObject("tasks")
    tasks.toSeq.sortBy(_._1).foreach { case (task, positions) =>
      val p = t.putObject(task.name)
      positions.toSeq.sortBy(_._1).foreach { case (ssp, o) => p.put(ssp.key, o) }
    }
    if (starts.nonEmpty) {
      val b = root.putObject("starts")
      starts.toSeq.sortBy(_._1).foreach { case (task, positions) =>
        val p = b.putObject(task.name)
        positions.toSeq.sortBy(_._1).foreach { case (ssp, o) => p.put(ssp.key, o) }
      }
    }
    val st = root.putObject("state")
    state.toSeq.sortBy(_._1).foreach { case (k, v) => st.set[JsonNode](k, v) }
    Json.write(root)
  }

  def withState(key: String, value: JsonNode): SourceOffset = copy(state = state + (key -> value))

  /** Where the batch ending here begins for `task`'s `ssp`, given the previous offset. */
  def startOf(previous: SourceOffset, task: TaskName, ssp: SSP): Option[Long] =
    starts.get(task).flatMap(_.get(ssp)).orElse(previous.tasks.get(task).flatMap(_.get(ssp)))

  lazy val ssps: Set[SSP] = tasks.values.flatMap(_.keys).toSet

  /** The SSP -> task grouping in force. */
  lazy val grouping: Map[TaskName, Set[SSP]] = tasks.map { case (t, ps) => t -> ps.keySet }

  /** The least position of each SSP over the tasks that read it. */
  lazy val minPositions: Map[SSP, Long] =
    tasks.values.flatten.groupMapReduce(_._1)(_._2)(math.min)
}

object SourceOffset {
  val Version = 1

  def parse(json: String): SourceOffset = {
    val what = "the streamctl offset in the query checkpoint"
    val root = Json.parse(json, what)
    val version = Json.field(root, "version", what).asInt()
    if (version > Version) throw StreamctlException(
      s"The query checkpoint holds a streamctl offset of version $version; this streamctl knows up to $Version. Upgrade streamctl")
    def positions(node: JsonNode): Map[TaskName, Map[SSP, Long]] = node.properties().asScala.map { e =>
      TaskName(e.getKey) -> e.getValue.properties().asScala.map(p => SSP.parse(p.getKey) -> p.getValue.asLong()).toMap
    }.toMap
    val tasks = positions(Json.field(root, "tasks", what))
    val starts = Option(root.get("starts")).map(positions).getOrElse(Map.empty)
    val state = Option(root.get("state")).map(_.properties().asScala.map(e => e.getKey -> e.getValue).toMap).getOrElse(Map.empty)
    SourceOffset(tasks, state, starts)
  }
}
