package streamctl.spark

import scala.collection.mutable

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{
  SparkListener,
  SparkListenerExecutorAdded,
  SparkListenerExecutorRemoved
}
import org.apache.spark.streamctl.SparkExecutors

import streamctl.locality.ExecutorId

/**
 * The executors a query can place tasks on, kept current by listening to Spark: executors are added
 * and removed with their id and host. The driver is never one of them (in local mode it is the only
 * executor, so the list is empty and tasks get no preferred location).
 *
 * Listener events arrive on Spark's listener thread, after the fact; the list is what the driver
 * knew a moment ago, which is all a preference needs.
 *
 * {{{
 * val registry = ExecutorRegistry.start(spark.sparkContext)
 * registry.live          // Seq(ExecutorId("0", "10.0.0.2"), ExecutorId("1", "10.0.0.3"))
 * registry.stop()
 * }}}
 */
final class ExecutorRegistry extends SparkListener {
  private val hosts = mutable.Map.empty[String, String] // live executor id -> host
  // Ids already reported removed: a snapshot taken a moment earlier must not bring them back.
  private val gone = mutable.Set.empty[String]
  @volatile private var context: Option[SparkContext] = None

  /** Live executors, sorted by (host, id). */
  def live: Seq[ExecutorId] = synchronized(hosts.map { case (id, host) =>
    ExecutorId(id, host)
  }.toSeq.sorted)

  /** Adds executors known from a snapshot, unless an event already said they are gone. */
  def seed(executors: Seq[(String, String)]): Unit = synchronized {
    executors.foreach { case (id, hostPort) =>
      if (!ExecutorRegistry.isDriver(id) && !gone(id) && !hosts.contains(id))
        hosts(id) = ExecutorRegistry.hostOf(hostPort)
    }
  }

  override def onExecutorAdded(event: SparkListenerExecutorAdded): Unit =
    added(event.executorId, event.executorInfo.executorHost)

  override def onExecutorRemoved(event: SparkListenerExecutorRemoved): Unit =
    removed(event.executorId)

  def added(id: String, host: String): Unit = synchronized {
    if (!ExecutorRegistry.isDriver(id)) {
      hosts(id) = host
      gone -= id
    }
  }

  def removed(id: String): Unit = synchronized {
    hosts -= id
    gone += id
  }

  /** Stops listening; the list stays as it was. */
  def stop(): Unit = {
    context.foreach(_.removeSparkListener(this))
    context = None
  }
}

object ExecutorRegistry {

  /** Spark's executor id for the driver (`SparkContext.DRIVER_IDENTIFIER`, not public). */
  val DriverId = "driver"

  /**
   * A registry listening on `sc`, seeded with the executors already running. The listener is added
   * before the snapshot is read, so an executor added in between is not missed.
   */
  def start(sc: SparkContext): ExecutorRegistry = {
    val registry = new ExecutorRegistry
    sc.addSparkListener(registry)
    registry.context = Some(sc)
    registry.seed(SparkExecutors.active(sc))
    registry
  }

  def isDriver(id: String): Boolean = id == DriverId

  /** "host:port" -> "host"; "[::1]:4040" -> "[::1]"; a bare host is returned as it is. */
  def hostOf(hostPort: String): String = {
    val colon = hostPort.lastIndexOf(':')
    val port = if (colon < 0) "" else hostPort.substring(colon + 1)
    val bareIpv6 = hostPort.count(_ == ':') > 1 && !hostPort.startsWith("[")
    if (port.nonEmpty && port.forall(_.isDigit) && !bareIpv6) hostPort.substring(0, colon)
    else hostPort
  }
}
