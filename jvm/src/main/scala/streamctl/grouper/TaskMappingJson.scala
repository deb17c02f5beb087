package streamctl
package grouper

import com.fasterxml.jackson.databind.JsonNode
import streamctl.{Json, StreamctlException}
import streamctl.system.{SSP, TaskName}

import scala.jdk.CollectionConverters._

/**
 * JSON form of a [[TaskMapping]], shared by the metadata store and the source's Offset:
 *
 * {{{
 * {"version":1,
 *  "initialPartitionCounts":{"orders":2},
 *  "tasks":{"Partition 0":["kafka/orders/0","kafka/orders/2"],"Partition 1":["kafka/orders/1","kafka/orders/3"]}}
 * }}}
 *
 * Task-keyed rather than SSP-keyed because that is both smaller and how a broadcast SSP (listed
 * under every task) reads naturally. Output is fully sorted: Spark compares offsets as text, so the
 * same mapping must always produce the same bytes.
 */
object TaskMappingJson {

  /** The format version written; a reader refuses anything newer rather than guess. */
  val Version = 1

  def write(m: TaskMapping): String = {
    val root = Json.obj()
    root.put("version", Version)
    val counts = root.putObject("initialPartitionCounts")
    m.initialPartitionCounts.toSeq.sortBy(_._1).foreach { case (s, n) => counts.put(s, n) }
    val tasks = root.putObject("tasks")
    val bySsp = m.taskSsps
    for (t <- m.tasks) {
      val arr = tasks.putArray(t.name)
      bySsp(t).toArray.sortInPlace()(SspOrder).foreach(ssp => arr.add(ssp.key))
    }
    Json.write(root)
  }

  def read(text: String, what: String): TaskMapping = {
    val where = s"task mapping ($what)"
    def fail(msg: String) = throw StreamctlException(s"Malformed $where: $msg")

    val root = Json.parse(text, where)
    if (!root.isObject) fail("expected a JSON object")
    Json.version(root, Version, where)

    val counts = initialCounts(root, where, fail)

    val tasksNode = objectField(root, "tasks", where, fail)
    val tasks = Map.newBuilder[TaskName, Set[SSP]]
    for (e <- tasksNode.properties().asScala) {
      val task = TaskName(e.getKey)
      val arr = e.getValue
      if (!arr.isArray) fail(s"tasks.'${task.name}' is not an array of SSP keys")
      if (arr.isEmpty) fail(s"tasks.'${task.name}' has no SSPs")
      val ssps = Set.newBuilder[SSP]
      var i = 0
      for (el <- arr.asScala) {
        if (!el.isTextual) fail(s"tasks.'${task.name}'[$i] is not a string: $el")
        val ssp =
          try SSP.parse(el.textValue)
          catch {
            case ex: StreamctlException => fail(s"tasks.'${task.name}'[$i]: ${ex.getMessage}")
          }
        if (!counts.contains(ssp.stream))
          fail(
            s"tasks.'${task.name}'[$i] is SSP ${ssp.key}, but initialPartitionCounts has no stream '${ssp.stream}'"
          )
        ssps += ssp
        i += 1
      }
      tasks += task -> ssps.result()
    }
    TaskMapping(counts, tasks.result())
  }

  /**
   * Field `initialPartitionCounts` of `root`, a stream's count each: the task mapping's and the
   * grouping state's in the offset have it alike.
   */
  private[grouper] def initialCounts(
      root: JsonNode,
      where: String,
      fail: String => Nothing
  ): Map[String, Int] =
    objectField(root, "initialPartitionCounts", where, fail).properties().asScala.map { e =>
      val n = e.getValue
      if (!n.isInt || n.intValue <= 0)
        fail(s"initialPartitionCounts.'${e.getKey}' is not a positive integer: $n")
      e.getKey -> n.intValue
    }.toMap

  private def objectField(
      root: JsonNode,
      name: String,
      where: String,
      fail: String => Nothing
  ): JsonNode = {
    val n = Json.field(root, name, where)
    if (!n.isObject) fail(s"field '$name' is not a JSON object")
    n
  }

  // SSP.ordering builds a tuple per comparison; this runs on every write of a mapping
  // that may hold 100,000 SSPs, so compare the fields directly.
  private object SspOrder extends Ordering[SSP] {
    override def compare(x: SSP, y: SSP): Int = {
      var c = x.system.compareTo(y.system)
      if (c == 0) c = x.stream.compareTo(y.stream)
      if (c == 0) c = Integer.compare(x.partition, y.partition)
      c
    }
  }
}
