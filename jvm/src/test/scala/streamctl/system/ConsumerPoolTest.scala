package streamctl.system

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

// No broker needed: a consumer is created without connecting, and closing is observable as the
// IllegalStateException that assignment() throws.
class ConsumerPoolTest {
  private def params(name: String) = KafkaParams(Map("bootstrap.servers" -> "127.0.0.1:1",
    "client.id" -> s"consumer-pool-$name-${System.nanoTime}"))

  private def closed(c: ConsumerPool.Consumer): Boolean =
    try { c.assignment(); false } catch { case _: IllegalStateException => true }

  @Test def twoQueriesReadingTheSameTaskNameKeepTheirOwnConsumers(): Unit = {
    val kp = params("two-queries")
    // Both queries of a pipeline have a task `Partition 0`, and their readers run side by side.
    val (a, aReused) = ConsumerPool.acquireNoting(kp, "/chk/upstream/sources/0", "Partition 0")
    val (b, bReused) = ConsumerPool.acquireNoting(kp, "/chk/downstream/sources/0", "Partition 0")
    assertFalse(aReused || bReused)
    ConsumerPool.release(kp, "/chk/upstream/sources/0", "Partition 0", a)
    ConsumerPool.release(kp, "/chk/downstream/sources/0", "Partition 0", b)
    assertFalse(closed(a), "the second release must not close the first query's consumer")
    assertFalse(closed(b))
    val (a2, a2Reused) = ConsumerPool.acquireNoting(kp, "/chk/upstream/sources/0", "Partition 0")
    val (b2, b2Reused) = ConsumerPool.acquireNoting(kp, "/chk/downstream/sources/0", "Partition 0")
    assertSame(a, a2, "each query's task gets back the consumer assigned to its own partitions")
    assertSame(b, b2)
    assertTrue(a2Reused && b2Reused)
    ConsumerPool.closeQuietly(a2)
    ConsumerPool.closeQuietly(b2)
  }

  @Test def twoReadersOfOneKeyAtOnceBothStayPooled(): Unit = {
    val kp = params("same-key")
    val (a, _) = ConsumerPool.acquireNoting(kp, "batch read", "Partition 0")
    val (b, _) = ConsumerPool.acquireNoting(kp, "batch read", "Partition 0")
    assertNotSame(a, b)
    ConsumerPool.release(kp, "batch read", "Partition 0", a)
    ConsumerPool.release(kp, "batch read", "Partition 0", b)
    assertFalse(closed(a) || closed(b))
    val (c, _) = ConsumerPool.acquireNoting(kp, "batch read", "Partition 0")
    val (d, _) = ConsumerPool.acquireNoting(kp, "batch read", "Partition 0")
    assertEquals(Set(a, b), Set(c, d))
    ConsumerPool.closeQuietly(c)
    ConsumerPool.closeQuietly(d)
  }

  @Test def theLeastRecentlyReleasedConsumerIsClosedBeyondCapacity(): Unit = {
    val kp = params("capacity")
    val before = ConsumerPool.capacity
    ConsumerPool.clear()
    ConsumerPool.capacity = 2
    try {
      val consumers = (0 until 3).map(i => ConsumerPool.acquireNoting(kp, "/chk/q", s"Partition $i")._1)
      consumers.zipWithIndex.foreach { case (c, i) => ConsumerPool.release(kp, "/chk/q", s"Partition $i", c) }
      assertEquals(Seq(true, false, false), consumers.map(closed))
      assertEquals(2, ConsumerPool.idleCount)
    } finally {
      ConsumerPool.capacity = before
      ConsumerPool.clear()
    }
  }
}
