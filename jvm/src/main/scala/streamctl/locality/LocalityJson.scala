package streamctl.locality

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode
import scala.jdk.CollectionConverters._
import streamctl.system.TaskName
import streamctl.{Json, StreamctlException}

/**
 * The stored form of a [[TaskLocality]]:
 * `{"version":1,"placement":{"Partition 0":{"id":"1","host":"h"}},"homes":{...}}`, plus
 * `"settled":["Partition 3"]` when some are. Task names are object keys, so they are unique by
 * construction. A store written before `settled` reads with none (every task with a home a guest),
 * and a reader before it skips the field: the worst either does is the choice it made before.
 */
private[locality] object LocalityJson {
  val Version = 1

  def write(locality: TaskLocality): String = {
    val root = Json.obj()
    root.put("version", Version)
    writeTasks(root.putObject("placement"), locality.placement)
    writeTasks(root.putObject("homes"), locality.homes)
    if (locality.settled.nonEmpty) {
      val settled = root.putArray("settled")
      locality.settled.toSeq.sorted.foreach(t => settled.add(t.name))
    }
    Json.write(root)
  }

  def read(text: String, key: String): TaskLocality = {
    val what = s"task locality '$key'"
    val root = Json.parse(text, what)
    if (!root.isObject) throw StreamctlException(s"Malformed $what: expected a JSON object")
    // A newer writer may mean something we cannot see; guessing could pin tasks wrongly.
    Json.version(root, Version, what)
    val homes = readTasks(root, "homes", what)
    val settled = Option(root.get("settled")).fold(Set.empty[TaskName]) { node =>
      if (!node.isArray || !node.elements().asScala.forall(_.isTextual))
        throw StreamctlException(s"Malformed $what: 'settled' must be an array of task names")
      node.elements().asScala.map(n => TaskName(n.asText)).toSet
    }
    TaskLocality(readTasks(root, "placement", what), homes, settled.filter(homes.contains))
  }

  private def writeTasks(node: ObjectNode, tasks: Map[TaskName, ExecutorId]): Unit =
    tasks.toSeq.sortBy(_._1).foreach { case (task, e) =>
      node.putObject(task.name).put("id", e.id).put("host", e.host)
    }

  private def readTasks(root: JsonNode, name: String, what: String): Map[TaskName, ExecutorId] = {
    val node = Json.field(root, name, what)
    if (!node.isObject)
      throw StreamctlException(s"Malformed $what: '$name' must map task names to executors")
    node.properties().asScala.map { entry =>
      val where = s"$what, $name of task '${entry.getKey}'"
      TaskName(entry.getKey) -> executor(entry.getValue, where)
    }.toMap
  }

  private def executor(node: JsonNode, where: String): ExecutorId = {
    def text(field: String): String = {
      val f = Json.field(node, field, where)
      if (!f.isTextual) throw StreamctlException(s"Malformed $where: '$field' must be a string")
      f.asText
    }
    if (!node.isObject)
      throw StreamctlException(s"""Malformed $where: expected {"id":...,"host":...}""")
    val (id, host) = (text("id"), text("host"))
    try ExecutorId(id, host)
    catch {
      case e: StreamctlException =>
        throw StreamctlException(s"Malformed $where: ${e.getMessage}", e)
    }
  }
}
