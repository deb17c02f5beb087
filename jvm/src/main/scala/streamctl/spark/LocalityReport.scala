package streamctl.spark

import org.apache.hadoop.conf.Configuration
import org.apache.spark.SparkContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.streamctl.SparkExecutors

import streamctl.Json
import streamctl.locality.{TaskLocality, TaskLocalityStore}
import streamctl.metadata.{MetadataStore, StoreLayout}

/**
 * What Python's `streamctl.describe_locality` and `streamctl.live_executors` read, as JSON
 * text (one py4j call, no JVM objects to walk). Read-only: nothing is created in the store.
 * The one-argument forms use the active session's SparkContext and Hadoop configuration.
 *
 * {{{
 * LocalityReport.describe("/chk/q1/streamctl", hadoopConf)
 * // [{"source":"0","task":"Partition 0","executorId":"1","host":"10.0.0.2","location":"executor_10.0.0.2_1"}]
 * }}}
 */
object LocalityReport {
  /** Every source's task -> executor assignment in the store at `storeUri`, sorted by source and task. */
  def describe(storeUri: String): String = describe(storeUri, activeContext.hadoopConfiguration)

  def describe(storeUri: String, hadoopConf: Configuration): String = {
    val store = MetadataStore.open(storeUri, hadoopConf)
    try {
      val out = Json.mapper.createArrayNode()
      store.keys(StoreLayout.LocalityNamespace).flatMap(k => StoreLayout.localitySource(k).map(_ -> k)).foreach { case (source, key) =>
        val locality: TaskLocality = new TaskLocalityStore(store, key).load()
        locality.placement.toSeq.sortBy(_._1).foreach { case (task, e) =>
          out.addObject().put("source", source).put("task", task.name)
            .put("executorId", e.id).put("host", e.host).put("location", e.location)
        }
      }
      Json.write(out)
    } finally store.close()
  }

  /** The store of a query from its checkpoint location (`metadata.store.path` not set). */
  def describeCheckpoint(checkpoint: String): String = describe(StoreLayout.ofQuery(checkpoint))

  /** The executors tasks can be placed on now (the driver excluded), sorted by host and id. */
  def liveExecutors(): String = liveExecutors(activeContext)

  def liveExecutors(sc: SparkContext): String = {
    val registry = new ExecutorRegistry
    registry.seed(SparkExecutors.active(sc))
    val out = Json.mapper.createArrayNode()
    registry.live.foreach(e => out.addObject().put("id", e.id).put("host", e.host))
    Json.write(out)
  }

  private def activeContext: SparkContext = SparkSession.active.sparkContext
}
