package streamctl.locality

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode
import scala.jdk.CollectionConverters._
import streamctl.system.TaskName
import streamctl.{Json, StreamctlException}

/**
 * The stored form of a [[TaskLocality]]:
 * `{"version":1,"placement":{"Partition 0":{"id":"1","host":"h"}},"homes":{...}}`. Task names are
 * object keys, so they are unique by construction.
 */
private[locality] object LocalityJson {
  val Version = 1

  def write(locality: TaskLocality): String = {
    val root = Json.obj()
    root.put("version", Version)
    writeTasks(root.putObject("placement"), locality.placement)
    writeTasks(root.putObject("homes"), locality.homes)
    Json.write(root)
  }

  def read(text: String, key: String): TaskLocality = {
    val what = s"task locality '$key'"
    val root = Json.parse(text, what)
    if (!root.isObject) throw StreamctlException(s"Malformed $what: expected a JSON object")
    // A newer writer may mean something we cannot see; guessing could pin tasks wrongly.
    Json.version(root, Version, what)
    TaskLocality(readTasks(root, "placement", what), readTasks(root, "homes", what))
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
