package streamctl.ops

import org.apache.hadoop.conf.Configuration

import streamctl.StreamctlException
import streamctl.grouper.{TaskMapping, TaskOrder}
import streamctl.locality.{TaskLocality, TaskLocalityStore}
import streamctl.metadata.{FileSystemMetadataStore, MetadataStore, StoreLayout}

/**
 * The SSP -> task mappings recorded in a query's metadata store, one row per (source, SSP, task),
 * for `CALL streamctl.system.describe_tasks` (Python's `streamctl.describe_tasks`). A broadcast SSP
 * has one row per task.
 *
 * {{{
 * TaskListing.rows("/chk/q1/streamctl", hadoopConf)
 * // Seq(TaskRow("0", "orders", 0, "Partition 0", None), ...)
 * }}}
 */
object TaskListing {

  /** Every task row of the metadata store at `storeUri`. */
  def rows(storeUri: String, hadoopConf: Configuration): Seq[TaskRow] = {
    val store = new FileSystemMetadataStore(storeUri, hadoopConf)
    try tasks(
        mappings(store, storeUri),
        source => new TaskLocalityStore(store, StoreLayout.Source(source).localityKey).load()
      )
    finally store.close()
  }

  /** (source id, mapping) for every source whose mapping the store holds, by source id. */
  private[ops] def mappings(store: MetadataStore, where: String): Seq[(String, TaskMapping)] = {
    val keys = store.keys(StoreLayout.MappingNamespace).flatMap(k =>
      StoreLayout.mappingSource(k).map(_ -> k)
    )
    if (keys.isEmpty)
      throw StreamctlException(
        s"No task mapping in the metadata store at $where: has a streamctl query run with this " +
          "checkpoint (or metadata.store.path) yet?"
      )
    keys.map { case (source, k) =>
      val text = store.get(StoreLayout.MappingNamespace, k).getOrElse(
        throw StreamctlException(
          s"Task mapping '$k' vanished from the metadata store at $where while being read"
        )
      )
      source -> TaskMapping.fromJson(text, s"metadata store at $where, key '$k'")
    }.sortBy(_._1)
  }

  /**
   * `locality(source)` is the source's task -> executor assignment (empty without host affinity).
   */
  private[ops] def tasks(
      mappings: Seq[(String, TaskMapping)],
      locality: String => TaskLocality
  ): Seq[TaskRow] =
    for {
      (source, m) <- mappings
      placement = locality(source)
      ssp <- m.ssps.toSeq.sorted
      task <- m.tasksOf(ssp).toSeq.sorted(TaskOrder)
    } yield TaskRow(
      source,
      ssp.stream,
      ssp.partition,
      task.name,
      placement.executorOf(task).map(_.location)
    )
}
