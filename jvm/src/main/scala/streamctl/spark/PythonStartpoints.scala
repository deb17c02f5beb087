package streamctl.spark

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession

import streamctl.StreamctlException
import streamctl.metadata.{MetadataStore, StoreLayout}
import streamctl.startpoint.StartpointCommands
import streamctl.system.{KafkaParams, KafkaSystemAdmin}

/**
 * Opens [[StartpointCommands]] for Python (`streamctl.StartpointManager`, the CLI), knowing
 * only what a user knows: the query's checkpoint or its metadata store path, and optionally
 * the Kafka servers. The store is found exactly as the source finds it
 * ([[StoreLayout]]), and reached with the active session's Hadoop configuration (so
 * HDFS/S3 credentials set on Spark apply), or a default one when there is no session (the
 * CLI's bare JVM).
 *
 * {{{
 * val commands = PythonStartpoints.open("/chk/q1", null, "127.0.0.1:9092")
 * }}}
 */
object PythonStartpoints {
  def open(checkpoint: String, metadataStorePath: String, bootstrapServers: String): StartpointCommands = {
    val location = (Option(checkpoint).filter(_.nonEmpty), Option(metadataStorePath).filter(_.nonEmpty)) match {
      case (Some(c), None) => StoreLayout.ofQuery(c)
      case (None, Some(p)) => p
      case _ => throw StreamctlException("Give exactly one of checkpoint (the query's checkpointLocation) or metadata_store_path")
    }
    val admin = Option(bootstrapServers).filter(_.nonEmpty).map(s => KafkaSystemAdmin(KafkaParams(Map("bootstrap.servers" -> s))))
    new StartpointCommands(MetadataStore.open(location, hadoopConf()), admin, location)
  }

  private def hadoopConf(): Configuration =
    SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession)
      .map(_.sparkContext.hadoopConfiguration).getOrElse(new Configuration())
}
