package streamctl

import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import org.junit.jupiter.api.Assertions.assertTrue

/**
 * Waiting in a unit test for what another thread does: the test goes on at the event, never after a
 * fixed sleep.
 *
 * {{{
 * Eventually.eventually("five entries")(store.written.size == 5)
 * Eventually.eventually("the admin client closed")(!Eventually.threadAlive(_.contains(clientId)))
 * }}}
 */
object Eventually {

  /** Returns once `condition` holds; fails naming `what` when it does not within `seconds`. */
  def eventually(what: String, seconds: Long = 10)(condition: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    while (!condition) {
      assertTrue(System.nanoTime() < deadline, s"not in $seconds s: $what")
      Thread.sleep(5)
    }
  }

  /** Whether a live thread has a name that `named` accepts. */
  def threadAlive(named: String => Boolean): Boolean =
    Thread.getAllStackTraces.keySet.asScala.exists(t => t.isAlive && named(t.getName))
}
