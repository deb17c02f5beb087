package streamctl.spark

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession

import streamctl.{Json, StreamctlException}
import streamctl.grouper.{TaskMapping, TaskOrder}
import streamctl.locality.{TaskLocality, TaskLocalityStore}
import streamctl.metadata.{FileSystemMetadataStore, MetadataStore, StoreLayout}

/**
 * The SSP -> task mappings recorded in a query's metadata store, one row per (source, SSP,
 * task), for `streamctl.describe_tasks` in Python. A broadcast SSP has one row per task.
 * Rows are JSON so that Python only formats them; `executor` (`executor_<host>_<id>`) is the
 * executor host affinity assigned the task, absent without an assignment.
 *
 * {{{
 * TaskListing.json("/chk/q1", null)
 * // [{"source":"0","stream":"orders","partition":0,"task":"Partition 0"}, ...]
 * }}}
 */
object TaskListing {
  /** `metadataStorePath` wins when given (as option `metadata.store.path` does); else `<checkpoint>/streamctl`. */
  def json(checkpoint: String, metadataStorePath: String): String =
    json(checkpoint, metadataStorePath, SparkSession.active.sparkContext.hadoopConfiguration)

  def json(checkpoint: String, metadataStorePath: String, hadoopConf: Configuration): String = {
    if (checkpoint == null && metadataStorePath == null)
      throw StreamctlException("describe_tasks needs the query's checkpoint location or its metadata store path")
    val path = Option(metadataStorePath).getOrElse(StoreLayout.ofQuery(checkpoint))
    val store = new FileSystemMetadataStore(path, hadoopConf)
    try write(rows(store, path), source => new TaskLocalityStore(store, StoreLayout.Source(source).localityKey).load())
    finally store.close()
  }

  /** (source id, mapping) for every source whose mapping the store holds, by source id. */
  private[spark] def rows(store: MetadataStore, where: String): Seq[(String, TaskMapping)] = {
    val keys = store.keys(StoreLayout.MappingNamespace).flatMap(k => StoreLayout.mappingSource(k).map(_ -> k))
    if (keys.isEmpty)
      throw StreamctlException(s"No task mapping in the metadata store at $where: has a streamctl query run with this " +
        "checkpoint (or metadata.store.path) yet?")
    keys.map { case (source, k) =>
      val text = store.get(StoreLayout.MappingNamespace, k).getOrElse(
        throw StreamctlException(s"Task mapping '$k' vanished from the metadata store at $where while being read"))
      source -> TaskMapping.fromJson(text, s"metadata store at $where, key '$k'")
    }.sortBy(_._1)
  }

  /** `locality(source)` is the source's task -> executor assignment (empty without host affinity). */
  private[spark] def write(mappings: Seq[(String, TaskMapping)], locality: String => TaskLocality): String = {
    val arr = Json.mapper.createArrayNode()
    for ((source, m) <- mappings) {
      val placement = locality(source)
      for (ssp <- m.ssps.toSeq.sorted; task <- m.tasksOf(ssp).toSeq.sorted(TaskOrder)) {
        val row = arr.addObject()
        row.put("source", source)
        row.put("stream", ssp.stream)
        row.put("partition", ssp.partition)
        row.put("task", task.name)
        placement.executorOf(task).foreach(e => row.put("executor", e.location))
      }
    }
    Json.write(arr)
  }
}
