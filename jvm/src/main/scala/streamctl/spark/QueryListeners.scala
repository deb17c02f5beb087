package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.StreamingQueryManager

/**
 * Puts exactly one [[StreamctlQueryListener]] on every session that uses `format("streamctl")`, so
 * that queries stop at end-of-stream and set up their in-band control without a setting the user
 * could forget. Called by the provider when Spark resolves a streamctl source or sink, on the
 * caller's thread, before the query starts (so the listener hears it start). A listener that is
 * already there (from `spark.sql.streaming.streamingQueryListeners`, as `configure_spark` and older
 * setups register it) is adopted, never doubled.
 *
 * {{{
 * QueryListeners.ensureRegistered(SparkSession.active)
 * }}}
 */
object QueryListeners {
  // Sessions (their query managers) streamctl registered on, to find their queries from threads
  // where they are not active (Spark Connect serves each client from a session of its own).
  private val managers = java.util.Collections.synchronizedMap(new java.util.WeakHashMap[
    StreamingQueryManager,
    java.lang.Boolean
  ]())

  def ensureRegistered(session: SparkSession): Unit = {
    val streams = session.streams
    streams.synchronized {
      val listener = streams.listListeners().collectFirst { case l: StreamctlQueryListener =>
        l
      }.getOrElse {
        val added = new StreamctlQueryListener
        streams.addListener(added)
        added
      }
      listener.attach(streams)
    }
    managers.put(streams, java.lang.Boolean.TRUE)
  }

  /** The query managers of the sessions streamctl registered on, still alive. */
  def knownManagers: Seq[StreamingQueryManager] =
    managers.synchronized(managers.keySet.asScala.toSeq)
}
