package streamctl
package plan

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import streamctl.Json
import streamctl.system.{SSP, SspValues, TaskName}

/**
 * Where a streamctl source is: what Spark writes in the query's offset log for it (wrapped by
 * `spark.SourceOffset`). For every task, the next offset to read of each of its SSPs (so the SSP ->
 * task mapping in force is part of it), and every other piece of state that must survive a crash
 * together with those offsets ([[SourceState]]: control bookkeeping, applied startpoints, ...). A
 * batch replayed after a crash is planned from this alone, so it reads the same records and reaches
 * the same state.
 *
 * Positions are per task because one SSP can be read by several tasks (broadcast streams), each
 * from its own position (a task-level startpoint moves only that task).
 *
 * `starts` holds, for the batch that ends at this position, where it begins for the task SSPs whose
 * beginning is not the previous position: a startpoint moved it, or the SSP is new (partition
 * expansion). Recording it here, in the batch's own end offset, is what makes a replay after a
 * crash read the same records.
 *
 * The JSON is deterministic (sorted keys): Spark decides "no new data" by comparing offsets, so
 * equal content gives equal text. It is written once per batch, so it stays small at thousands of
 * partitions (version 2): an SSP read by one task named after its partition (`Partition p`, or
 * `Partition p % k` after the stream grew from k partitions: the default grouper's tasks) is one
 * number in its stream's array under `next` ([[streamctl.system.SspValues]]), with the stream's `k`
 * under `modulo`; every other task SSP (other groupers, broadcast streams) is under `tasks`, by
 * task, as version 1 wrote every one. Version 1 offsets (up to streamctl 0.1.0 of 2026-11-26, and
 * `tests/data/checkpoint-08f2737`) still read.
 *
 * {{{
 * {"version":2,"next":{"kafka/orders":[42,17]},"state":{}}
 * {"version":2,"modulo":{"kafka/orders":2},"next":{"kafka/orders":[42,17,3,0]},"state":{}}
 * {"version":2,"tasks":{"SystemStreamPartition [kafka, orders, 0]":{"kafka/orders/0":42}},"state":{}}
 * }}}
 */
final case class SourcePosition(
    tasks: Map[TaskName, Map[SSP, Long]],
    state: SourceState = SourceState.empty,
    starts: Map[TaskName, Map[SSP, Long]] = Map.empty
) {

  lazy val json: String = {
    val root = Json.obj()
    root.put("version", SourcePosition.Version)
    SourcePosition.writeTasks(tasks, root)
    if (starts.nonEmpty) SourcePosition.writePositions("starts", starts, root)
    state.write(root.putObject("state"))
    Json.write(root)
  }

  def withState(f: SourceState => SourceState): SourcePosition = copy(state = f(state))

  /** Where the batch ending here begins for `task`'s `ssp`, given the previous position. */
  def startOf(previous: SourcePosition, task: TaskName, ssp: SSP): Option[Long] =
    starts.get(task).flatMap(_.get(ssp)).orElse(previous.tasks.get(task).flatMap(_.get(ssp)))

  lazy val ssps: Set[SSP] = tasks.valuesIterator.flatMap(_.keysIterator).toSet

  /** The least position of each SSP over the tasks that read it. */
  lazy val minPositions: Map[SSP, Long] = {
    // Most SSPs are read by one task: built directly, merged only when one is read by several.
    val b = Map.newBuilder[SSP, Long]
    var occurrences = 0
    tasks.valuesIterator.foreach { ps => b ++= ps; occurrences += ps.size }
    val direct = b.result()
    if (direct.size == occurrences) direct
    else tasks.valuesIterator.flatten.toSeq.groupMapReduce(_._1)(_._2)(math.min)
  }
}

object SourcePosition {

  /** The format version written; see [[StateCodec]] for how the states are versioned by it. */
  val Version = 2

  /**
   * Reads an offset this streamctl (or an older one) wrote, whose states `codecs` read
   * (`planner.SourceStates`).
   */
  def parse(json: String, codecs: Seq[StateCodec[_]]): SourcePosition = {
    val (root, tasks) = parseTasks(json)
    SourcePosition(
      tasks,
      Option(root.get("state")).fold(SourceState.empty)(SourceState.read(_, What, codecs)),
      Option(root.get("starts")).map(positions).getOrElse(Map.empty)
    )
  }

  private val What = "the streamctl offset in the query checkpoint"

  private def positions(node: JsonNode): Map[TaskName, Map[SSP, Long]] =
    node.properties().asScala.map { e =>
      TaskName(e.getKey) -> e.getValue.properties().asScala.map(p =>
        SSP.parse(p.getKey) -> p.getValue.asLong()
      ).toMap
    }.toMap

  // The offset's root and the positions of each task, whichever form they were written in.
  private def parseTasks(json: String): (JsonNode, Map[TaskName, Map[SSP, Long]]) = {
    val root = Json.parse(json, What)
    val version = Json.version(root, Version, What)
    // Version 1 has every task SSP under `tasks`; version 2 only those `next` cannot hold.
    val explicit = if (version == 1) positions(Json.field(root, "tasks", What))
    else Option(root.get("tasks")).map(positions).getOrElse(Map.empty[TaskName, Map[SSP, Long]])
    val modulo = Option(root.get("modulo")).map(_.properties().asScala.map(e =>
      e.getKey -> e.getValue.asInt
    ).toMap)
      .getOrElse(Map.empty[String, Int])
    val compact = Option(root.get("next")).map(SspValues.read(_, What)).getOrElse(Map.empty)
    val tasks =
      if (compact.isEmpty) explicit
      else {
        // An offset of thousands of partitions is read every batch: built directly while every
        // task has one SSP (one stream read by the default grouper), merged otherwise.
        val withTask = compact.iterator.map { case (ssp, o) =>
          val k = if (modulo.isEmpty) None
          else modulo.get(SspValues.streamKey(ssp.system, ssp.stream))
          (taskOf(ssp, k), ssp, o)
        }.toSeq
        val direct = withTask.iterator.map { case (t, ssp, o) => t -> Map(ssp -> o) }.toMap
        if (explicit.isEmpty && direct.size == withTask.size) direct
        else withTask.foldLeft(explicit) { case (acc, (task, ssp, o)) =>
          acc.updated(task, acc.getOrElse(task, Map.empty[SSP, Long]).updated(ssp, o))
        }
      }
    (root, tasks)
  }

  /**
   * The positions of an offset by task (`{"Partition 0":{"kafka/orders/0":42}}`), whichever form it
   * was written in: for tools that show them (the demo), so no second reader of the format exists.
   */
  def positionsByTask(json: String): String = {
    val root = Json.obj()
    writePositions("tasks", parseTasks(json)._2, root)
    Json.write(root.get("tasks"))
  }

  /* The default grouper's task of a partition: `Partition p`, or `Partition p % k` after the stream
   * grew from k. */
  private def taskOf(ssp: SSP, modulo: Option[Int]): TaskName =
    TaskName.ofPartition(modulo.fold(ssp.partition)(ssp.partition % _))

  private def writePositions(
      name: String,
      of: Map[TaskName, Map[SSP, Long]],
      root: ObjectNode
  ): Unit = {
    val t = root.putObject(name)
    of.toSeq.sortBy(_._1).foreach { case (task, ps) =>
      val p = t.putObject(task.name)
      ps.toSeq.sortBy(_._1).foreach { case (ssp, o) => p.put(ssp.key, o) }
    }
  }

  /**
   * Writes `tasks` compactly: per stream, the SSPs read by exactly one task that is the default
   * grouper's task of their partition (with the stream's modulus, if it grew) go to `next`, the
   * rest to `tasks` in full. Written once per batch at thousands of partitions, so it passes over
   * the task SSPs a fixed number of times and formats no task name.
   */
  private def writeTasks(tasks: Map[TaskName, Map[SSP, Long]], root: ObjectNode): Unit = {
    // Per SSP its one reader (task's partition number, offset), or Shared when several read it.
    val single = new java.util.HashMap[SSP, AnyRef]()
    var occurrences = 0
    tasks.foreach { case (t, ps) =>
      val partition = TaskName.partitionOf(t)
      ps.foreach { case (s, o) =>
        occurrences += 1
        if (single.putIfAbsent(s, Reader(partition, o)) != null) single.put(s, Shared)
      }
    }
    /* Per stream, the modulus its single-task SSPs follow: none while every one is in `Partition
     * p`, else the first partition that is not (a stream that grew from k partitions puts partition
     * k in `Partition 0`). */
    val firstElsewhere = scala.collection.mutable.HashMap.empty[(String, String), Int]
    single.forEach { (s, r) =>
      r match {
        case Reader(p, _) if p != s.partition =>
          val stream = (s.system, s.stream)
          if (firstElsewhere.get(stream).forall(s.partition < _))
            firstElsewhere.update(stream, s.partition)
        case _ =>
      }
    }
    val modulo = firstElsewhere.filter(_._2 > 0).toMap
    val compact = Map.newBuilder[SSP, Long]
    val usedModulo = scala.collection.mutable.HashSet.empty[(String, String)]
    var compacted = 0
    single.forEach { (s, r) =>
      r match {
        case Reader(p, o) =>
          val k = if (modulo.isEmpty) None else modulo.get((s.system, s.stream))
          if (p >= 0 && p == k.fold(s.partition)(s.partition % _)) {
            compact += s -> o
            compacted += 1
            if (k.nonEmpty) usedModulo += ((s.system, s.stream))
          }
        case _ =>
      }
    }
    val inCompact = compact.result()
    if (usedModulo.nonEmpty) {
      val m = root.putObject("modulo")
      usedModulo.toSeq.sorted.foreach { case stream @ (system, name) =>
        m.put(SspValues.streamKey(system, name), modulo(stream))
      }
    }
    if (inCompact.nonEmpty) SspValues.write(inCompact, root.putObject("next"))
    if (compacted < occurrences) {
      val rest = tasks.map { case (t, ps) =>
        t -> ps.filter { case (s, _) => !inCompact.contains(s) }
      }.filter(_._2.nonEmpty)
      writePositions("tasks", rest, root)
    }
  }

  private final case class Reader(partition: Int, offset: Long)
  private object Shared
}
