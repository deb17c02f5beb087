package streamctl

import java.util.concurrent.ThreadFactory

/**
 * Threads for streamctl's background work (control timers, control-state writes, stream checks
 * asked ahead): daemons, so they never keep a driver or executor JVM alive after its work ended.
 *
 * {{{
 * val pool = java.util.concurrent.Executors.newCachedThreadPool(DaemonThreads.named("streamctl-stream-check"))
 * }}}
 */
private[streamctl] object DaemonThreads {

  /** A factory of daemon threads, each named `name`. */
  def named(name: String): ThreadFactory = (r: Runnable) => {
    val t = new Thread(r, name)
    t.setDaemon(true)
    t
  }
}
