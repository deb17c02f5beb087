package streamctl.spark

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.apache.spark.sql.connector.read.streaming.Offset

import streamctl.{Json, StreamctlException}
import streamctl.grouper.TaskName
import streamctl.system.SSP

/**
 * What Spark writes in the query's offset log for a streamctl source: per SSP the next
 * offset to read, the SSP -> task mapping in force, and every other piece of state that
 * must survive a crash together with those offsets (`state`, one JSON object per feature:
 * control bookkeeping, applied startpoints, ...). A batch replayed after a crash is planned
 * from this alone, so it reads the same records and reaches the same state.
 *
 * The JSON is deterministic (sorted keys): Spark decides "no new data" by comparing
 * offsets, so equal content must give equal text.
 *
 * {{{
 * {"version":1,"positions":{"kafka/orders/0":42},"tasks":{"Partition 0":["kafka/orders/0"]},"state":{}}
 * }}}
 */
final case class SourceOffset(
    positions: Map[SSP, Long],
    tasks: Map[TaskName, Set[SSP]],
    state: Map[String, JsonNode] = Map.empty) extends Offset {

  override lazy val json: String = {
    val root = Json.obj()
    root.put("version", SourceOffset.Version)
    val pos = root.putObject("positions")
    positions.toSeq.sortBy(_._1).foreach { case (ssp, o) => pos.put(ssp.key, o) }
    val t = root.putObject("tasks")
    tasks.toSeq.sortBy(_._1).foreach { case (task, ssps) =>
      val arr = t.putArray(task.name)
      ssps.toSeq.sorted.foreach(s => arr.add(s.key))
    }
    val st = root.putObject("state")
    state.toSeq.sortBy(_._1).foreach { case (k, v) => st.set[JsonNode](k, v) }
    Json.write(root)
  }

  def withPositions(p: Map[SSP, Long]): SourceOffset = copy(positions = p)
  def withState(key: String, value: JsonNode): SourceOffset = copy(state = state + (key -> value))

  /** Tasks reading each SSP (several for a broadcast SSP). */
  lazy val tasksOf: Map[SSP, Seq[TaskName]] =
    tasks.toSeq.flatMap { case (t, ssps) => ssps.map(_ -> t) }.groupBy(_._1).map { case (s, ts) => s -> ts.map(_._2).sorted }
}

object SourceOffset {
  val Version = 1

  def parse(json: String): SourceOffset = {
    val what = "the streamctl offset in the query checkpoint"
    val root = Json.parse(json, what)
    val version = Json.field(root, "version", what).asInt()
    if (version > Version) throw StreamctlException(
      s"The query checkpoint holds a streamctl offset of version $version; this streamctl knows up to $Version. Upgrade streamctl")
    val positions = Json.field(root, "positions", what).properties().asScala
      .map(e => SSP.parse(e.getKey) -> e.getValue.asLong()).toMap
    val tasks = Json.field(root, "tasks", what).properties().asScala
      .map(e => TaskName(e.getKey) -> e.getValue.elements().asScala.map(n => SSP.parse(n.asText())).toSet).toMap
    val state = Option(root.get("state")).map(_.properties().asScala.map(e => e.getKey -> e.getValue).toMap).getOrElse(Map.empty)
    SourceOffset(positions, tasks, state)
  }
}
