package streamctl.locality

import org.apache.hadoop.conf.Configuration

import streamctl.metadata.{MetadataStore, StoreLayout}

/**
 * The task -> executor assignments host affinity recorded in a query's metadata store, for
 * `CALL streamctl.system.describe_locality` (Python's `streamctl.describe_locality`). Read-only:
 * nothing is created in the store.
 *
 * {{{
 * LocalityListing.rows("/chk/q1/streamctl", hadoopConf)
 * // Seq(LocalityRow("0", "Partition 0", "1", "10.0.0.2", "executor_10.0.0.2_1"))
 * }}}
 */
object LocalityListing {

  /**
   * Every source's task -> executor assignment in the store at `storeUri`, sorted by source and
   * task.
   */
  def rows(storeUri: String, hadoopConf: Configuration): Seq[LocalityRow] = {
    val store = MetadataStore.open(storeUri, hadoopConf)
    try {
      store.keys(StoreLayout.LocalityNamespace).flatMap(k =>
        StoreLayout.localitySource(k).map(_ -> k)
      ).flatMap { case (source, key) =>
        val locality: TaskLocality = new TaskLocalityStore(store, key).load()
        locality.placement.toSeq.sortBy(_._1).map { case (task, e) =>
          LocalityRow(source, task.name, e.id, e.host, e.location)
        }
      }
    } finally store.close()
  }
}
