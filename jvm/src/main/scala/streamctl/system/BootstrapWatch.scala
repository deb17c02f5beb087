package streamctl.system

import java.net.{InetSocketAddress, Socket}
import java.util.concurrent.{Executors, ScheduledFuture, TimeUnit}

import scala.util.control.NonFatal

import org.apache.kafka.common.utils.Utils
import org.slf4j.LoggerFactory

/**
 * One WARN when, [[BootstrapWatch.DelayMs]] after a client's first call to Kafka, nothing has
 * answered and no bootstrap server accepts a connection: a wrong port (nothing listening) would
 * otherwise look like a hang for the whole wait, `kafka.default.api.timeout.ms` (60 s), before its
 * error. The wait itself is kept: a query restarted during a real outage must still survive one
 * that ends within it.
 *
 * {{{
 * val watch = new BootstrapWatch(params.bootstrapServers, params.apiWait)
 * watch.start()      // at the first call
 * watch.answered()   // a call succeeded: nothing to say
 * watch.cancel()     // the client is closed
 * }}}
 */
final class BootstrapWatch(
    servers: String,
    wait: BrokerWait,
    delayMs: Long = BootstrapWatch.DelayMs
) {
  import BootstrapWatch._

  @volatile private var done = false
  private var scheduled: ScheduledFuture[_] = _

  def start(): Unit = synchronized {
    if (scheduled == null && !done && wait.ms > delayMs)
      scheduled = timer.schedule((() => check()): Runnable, delayMs, TimeUnit.MILLISECONDS)
  }

  def answered(): Unit = if (!done) cancel()

  def cancel(): Unit = synchronized {
    done = true
    if (scheduled != null) scheduled.cancel(false)
  }

  private def check(): Unit = if (!done) {
    val refused =
      servers.split(',').map(_.trim).filter(_.nonEmpty).toSeq.map(a => a -> connectError(a))
    if (!done && refused.forall(_._2.isDefined)) log.warn(
      s"No Kafka bootstrap server accepted a connection in ${delayMs / 1000} s: " +
        refused.map { case (a, why) => s"$a (${why.get})" }.mkString(", ") +
        s"; check option 'kafka.bootstrap.servers'. Still waiting, up to ${wait.ms} ms in all (option '${wait.option}'), before failing"
    )
  }
}

object BootstrapWatch {
  val DelayMs = 10000L
  private val ProbeTimeoutMs = 2000
  private val log = LoggerFactory.getLogger(classOf[BootstrapWatch])

  private lazy val timer = Executors.newSingleThreadScheduledExecutor { (r: Runnable) =>
    val t = new Thread(r, "streamctl-bootstrap-watch")
    t.setDaemon(true)
    t
  }

  /** Why `address` (host:port) does not accept a TCP connection; None when it does. */
  private def connectError(address: String): Option[String] =
    try {
      val host = Utils.getHost(address)
      val port = Utils.getPort(address)
      if (host == null || port == null) Some("not host:port")
      else {
        val socket = new Socket()
        try { socket.connect(new InetSocketAddress(host, port.intValue), ProbeTimeoutMs); None }
        finally socket.close()
      }
    } catch { case NonFatal(e) => Some(Option(e.getMessage).getOrElse(e.getClass.getSimpleName)) }
}
