package streamctl.system

import org.apache.kafka.common.TopicPartition
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

// No broker needed: a consumer is created and assigned without connecting, and closing is
// observable as the IllegalStateException that assignment() throws.
class ConsumerPoolTest {
  private def params(name: String) = KafkaParams(Map(
    "bootstrap.servers" -> "127.0.0.1:1",
    "client.id" -> s"consumer-pool-$name-${System.nanoTime}"
  ))

  private def closed(c: ConsumerPool.Consumer): Boolean =
    try { c.assignment(); false }
    catch { case _: IllegalStateException => true }

  /**
   * A reader of `ssp` as [[streamctl.spark.TaskPartitionReader]] uses the pool: acquire, assign.
   */
  private def read(
      kp: KafkaParams,
      task: String,
      ssp: SSP,
      owner: String = "query"
  ): (ConsumerPool.Consumer, Boolean) = {
    val lease = ConsumerPool.acquire(kp, owner, TaskName(task), Seq(ssp))
    lease.consumer.assign(java.util.Collections.singletonList(new TopicPartition(
      ssp.stream,
      ssp.partition
    )))
    (lease.consumer, lease.reused)
  }

  /** A reader of `owner`'s `Partition 0` that read `ssp` and gave its consumer back. */
  private def released(kp: KafkaParams, ssp: SSP, owner: String): ConsumerPool.Consumer = {
    val (c, _) = read(kp, "Partition 0", ssp, owner)
    ConsumerPool.release(kp, owner, TaskName("Partition 0"), c)
    c
  }

  @Test def twoQueriesReadingSideBySideKeepTheirOwnConsumers(): Unit = {
    val kp = params("side-by-side")
    // Both queries of a pipeline have a task `Partition 0`, and their readers run at once.
    val (a, aReused) = read(kp, "Partition 0", SSP.kafka("upstream", 0), owner = "a")
    val (b, bReused) = read(kp, "Partition 0", SSP.kafka("downstream", 0), owner = "b")
    assertFalse(aReused || bReused)
    ConsumerPool.release(kp, "a", TaskName("Partition 0"), a)
    ConsumerPool.release(kp, "b", TaskName("Partition 0"), b)
    assertFalse(closed(a), "the second release must not close the first query's consumer")
    assertFalse(closed(b))
    // The query that released first asks first: it still gets its own consumer, not the newest.
    val (a2, a2Reused) = read(kp, "Partition 0", SSP.kafka("upstream", 0), owner = "a")
    val (b2, b2Reused) = read(kp, "Partition 0", SSP.kafka("downstream", 0), owner = "b")
    assertSame(a, a2, "each reader gets back the consumer assigned to its own partitions")
    assertSame(b, b2)
    assertTrue(a2Reused && b2Reused)
    ConsumerPool.closeQuietly(a2)
    ConsumerPool.closeQuietly(b2)
  }

  @Test def aQueryStartingWhileAnotherQuerysReaderIsIdleDoesNotTakeItsConsumer(): Unit = {
    val kp = params("late-start")
    // Query a's batch ended; query b's first batch starts (later, under load) before a's next.
    val a = released(kp, SSP.kafka("upstream", 0), owner = "a")
    val (b, bReused) = read(kp, "Partition 0", SSP.kafka("downstream", 0), owner = "b")
    assertNotSame(a, b, "query b took query a's consumer, and a would create one next batch")
    assertFalse(bReused)
    val (a2, a2Reused) = read(kp, "Partition 0", SSP.kafka("upstream", 0), owner = "a")
    assertSame(a, a2)
    assertTrue(a2Reused)
    ConsumerPool.closeQuietly(a2)
    ConsumerPool.closeQuietly(b)
  }

  @Test def aNewQueryReadingTheSamePartitionsTakesAnEarlierQuerysIdleConsumer(): Unit = {
    val kp = params("next-query")
    val a = released(kp, SSP.kafka("orders", 0), owner = "a")
    // A benchmark's or a notebook's next query of the same topic: its connections are warm.
    val (b, reused) = read(kp, "Partition 0", SSP.kafka("orders", 0), owner = "b")
    assertSame(a, b)
    assertTrue(reused)
    ConsumerPool.closeQuietly(b)
  }

  @Test def aLaterRunOfTheSameQueryTakesTheIdleConsumerOfItsTask(): Unit = {
    val kp = params("later")
    val a = released(kp, SSP.kafka("orders", 0), owner = "query")
    /* A scheduled AvailableNow run whose task reads other partitions now (a grouper changed):
     * warm connections beat a new consumer. */
    val (b, reused) = read(kp, "Partition 0", SSP.kafka("orders", 1))
    assertSame(a, b)
    assertTrue(reused)
    ConsumerPool.closeQuietly(b)
  }

  @Test def theLeastRecentlyReleasedConsumerIsClosedBeyondMaxIdle(): Unit = {
    val kp = params("capacity")
    val before = ConsumerPool.maxIdle
    ConsumerPool.clear()
    ConsumerPool.maxIdle = 2
    try {
      val consumers = (0 until 3).map(i => read(kp, s"Partition $i", SSP.kafka("orders", i))._1)
      consumers.zipWithIndex.foreach { case (c, i) =>
        ConsumerPool.release(kp, "query", TaskName.ofPartition(i), c)
      }
      assertEquals(Seq(true, false, false), consumers.map(closed))
      assertEquals(2, ConsumerPool.idleCount)
    } finally {
      ConsumerPool.maxIdle = before
      ConsumerPool.clear()
    }
  }

  @Test def moreTasksThanTheOldFixedCapacityKeepEveryConsumer(): Unit = {
    /* 1,024 partitions: every batch's readers must find their consumers again (64 were kept
     * before). */
    val kp = params("many")
    ConsumerPool.clear()
    try {
      val first = (0 until 200).map(i => read(kp, s"Partition $i", SSP.kafka("orders", i))._1)
      first.zipWithIndex.foreach { case (c, i) =>
        ConsumerPool.release(kp, "query", TaskName.ofPartition(i), c)
      }
      val again = (0 until 200).map(i => read(kp, s"Partition $i", SSP.kafka("orders", i)))
      assertTrue(again.forall(_._2), "every task's consumer is reused")
      assertEquals(first, again.map(_._1))
      again.foreach(a => ConsumerPool.closeQuietly(a._1))
    } finally ConsumerPool.clear()
  }

  @Test def aConsumerIdleLongerThanTheTimeoutIsClosed(): Unit = {
    val kp = params("idle")
    val before = ConsumerPool.idleTimeoutMs
    ConsumerPool.clear()
    try {
      val (a, _) = read(kp, "Partition 0", SSP.kafka("orders", 0))
      ConsumerPool.release(kp, "query", TaskName("Partition 0"), a)
      ConsumerPool.idleTimeoutMs = 0
      // The next pool operation closes what outlived the timeout, before it hands anything out.
      val (b, reused) = read(kp, "Partition 1", SSP.kafka("orders", 1))
      assertTrue(closed(a))
      assertFalse(reused)
      ConsumerPool.closeQuietly(b)
    } finally {
      ConsumerPool.idleTimeoutMs = before
      ConsumerPool.clear()
    }
  }
}
