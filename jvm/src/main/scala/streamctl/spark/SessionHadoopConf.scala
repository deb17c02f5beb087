package streamctl.spark

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession

/**
 * The Hadoop configuration a session's file-system access uses, as Spark builds it for the query
 * checkpoint: the SparkContext's, with the session's own settings on top. Under Spark Connect
 * `spark.conf.set` is how a client gives its object store's credentials (`fs.s3a.*`), and the
 * metadata store beside the checkpoint must reach it the same way. Built from public API (Spark's
 * own `newHadoopConf` is internal), freshly per call: sessions differ and settings change.
 *
 * {{{
 * val store = MetadataStore.open(path, SessionHadoopConf.of(SparkSession.active))
 * }}}
 */
object SessionHadoopConf {
  def of(session: SparkSession): Configuration = {
    val conf = new Configuration(session.sparkContext.hadoopConfiguration)
    session.conf.getAll.foreach { case (k, v) => if (v != null) conf.set(k, v) }
    conf
  }
}
