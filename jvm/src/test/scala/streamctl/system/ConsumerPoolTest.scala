package streamctl.system

import org.apache.kafka.clients.consumer.ConsumerRecord
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

  @Test def theDefaultCountKeepsToHalfOfTheProcesssOpenFileLimit(): Unit = {
    assertEquals(128, ConsumerPool.maxConsumersFor(Some(1024L))) // four files a consumer
    assertEquals(2500, ConsumerPool.maxConsumersFor(Some(20000L)))
    assertEquals(10000, ConsumerPool.maxConsumersFor(Some(1L << 20)))
    assertEquals(10000, ConsumerPool.maxConsumersFor(None)) // no limit known (not a Unix JVM)
    assertEquals(1, ConsumerPool.maxConsumersFor(Some(4L)))
  }

  @Test def aConsumerLeavesItsReaderWhateverTheReadersClosingThrows(): Unit = {
    val kp = params("finish")
    val (c, _) = read(kp, "Partition 0", SSP.kafka("orders", 0))
    val held = ConsumerPool.openCount
    // A user's chooser throws in stop(), which the reader's closing calls before the consumer
    // goes back: the consumer must still be closed, and no longer count as held.
    val stop = new IllegalStateException("the chooser's stop failed")
    val e = assertThrows(
      classOf[IllegalStateException],
      () => ConsumerPool.finish(kp, "query", TaskName("Partition 0"), c, healthy = true)(throw stop)
    )
    assertSame(stop, e, "the closing's own failure surfaces")
    assertTrue(closed(c), "the consumer leaked")
    assertEquals(held - 1, ConsumerPool.openCount)

    // A clean read and a clean closing give it back.
    val (d, _) = read(kp, "Partition 0", SSP.kafka("orders", 0))
    ConsumerPool.finish(kp, "query", TaskName("Partition 0"), d, healthy = true)(())
    assertFalse(closed(d))
    val (again, reused) = read(kp, "Partition 0", SSP.kafka("orders", 0))
    assertSame(d, again)
    assertTrue(reused)
    ConsumerPool.finish(kp, "query", TaskName("Partition 0"), again, healthy = false)(())
    assertTrue(closed(again), "a failed read's consumer is closed")
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

  /**
   * Runs `body` with the pool empty and bounded to `n` consumers holding metadata of `partitions`
   * topic partitions, and empties it after.
   */
  private def bounded[T](n: Int, partitions: Long = Long.MaxValue)(body: => T): T = {
    val before = (ConsumerPool.maxConsumers, ConsumerPool.maxMetadataPartitions)
    ConsumerPool.clear()
    ConsumerPool.maxConsumers = Some(n)
    ConsumerPool.maxMetadataPartitions = partitions
    try body
    finally {
      ConsumerPool.maxConsumers = before._1
      ConsumerPool.maxMetadataPartitions = before._2
      ConsumerPool.clear()
    }
  }

  @Test def consumersOfABigTopicAreBoundedByTheMetadataTheyHold(): Unit = {
    // Three consumers' worth of a 4-partition topic: the fourth task borrows.
    val kp = params("metadata")
    bounded(100, partitions = 12) {
      val first = (0 until 4).map { i =>
        val (c, reused) = read(kp, s"Partition $i", SSP.kafka("orders", i))
        ConsumerPool.release(
          kp,
          "query",
          TaskName.ofPartition(i),
          c,
          partitionCounts = Map("orders" -> 4)
        )
        (c, reused)
      }
      assertEquals(Seq(false, false, false, true), first.map(_._2))
      assertSame(first(0)._1, first(3)._1)
      assertEquals(12L, ConsumerPool.heldPartitions)
      /* A topic not read here yet weighs nothing until its first reader reports its size; past the
       * bound then, the consumer idle longest is closed. */
      val (small, reused) = read(kp, "Partition 0", SSP.kafka("tiny", 0))
      assertFalse(reused)
      ConsumerPool.release(
        kp,
        "query",
        TaskName.ofPartition(0),
        small,
        partitionCounts = Map("tiny" -> 1)
      )
      assertEquals(Seq(false, true, false), Seq(first(0)._1, first(1)._1, first(2)._1).map(closed))
      assertEquals(9L, ConsumerPool.heldPartitions)
    }
  }

  /**
   * The readers of `orders` partitions 0 to `n - 1`, all at once, giving their consumers back once
   * all read.
   */
  private def readersAtOnce(kp: KafkaParams, n: Int): Seq[ConsumerPool.Consumer] = {
    val consumers = (0 until n).map(i => read(kp, s"Partition $i", SSP.kafka("orders", i))._1)
    consumers.zipWithIndex.foreach { case (c, i) =>
      ConsumerPool.release(kp, "query", TaskName.ofPartition(i), c)
    }
    consumers
  }

  private def record(tp: TopicPartition, offset: Long) =
    new ConsumerRecord(tp.topic(), tp.partition(), offset, Array[Byte](), Array[Byte]())

  @Test def atTheBoundAReaderTakesTheLeastRecentlyReleasedConsumerOfAnotherTask(): Unit = {
    val kp = params("bound")
    bounded(2) {
      val first = readersAtOnce(kp, 2)
      // 4,096 tasks on one executor held 4,096 consumers, each with the whole topic's metadata.
      val (c2, reused) = read(kp, "Partition 2", SSP.kafka("orders", 2))
      assertTrue(reused)
      assertSame(first(0), c2)
      assertEquals(2, ConsumerPool.openCount)
      ConsumerPool.release(kp, "query", TaskName.ofPartition(2), c2)
      // Partition 0's task finds its consumer lent out, and takes the one idle longest.
      val (c0, reused0) = read(kp, "Partition 0", SSP.kafka("orders", 0))
      assertTrue(reused0)
      assertSame(first(1), c0)
      assertEquals(Seq(false, false), first.map(closed))
      ConsumerPool.closeQuietly(c0)
    }
  }

  @Test def unboundedByASettingThePoolKeepsEightConsumersForEachReaderAtOnce(): Unit = {
    val kp = params("readers-at-once")
    val before = ConsumerPool.maxConsumers
    ConsumerPool.clear()
    ConsumerPool.maxConsumers = None
    try {
      // One reader at a time (one task slot): eight consumers; the ninth and tenth tasks borrow.
      val reused = (0 until 10).map { i =>
        val (c, reused) = read(kp, s"Partition $i", SSP.kafka("orders", i))
        ConsumerPool.release(kp, "query", TaskName.ofPartition(i), c)
        reused
      }
      assertEquals(Seq.fill(8)(false) ++ Seq(true, true), reused)
      assertEquals((8, 8), (ConsumerPool.countBound, ConsumerPool.openCount))
      // Three readers at once: room for 24, so the eleventh and twelfth tasks get their own.
      readersAtOnce(kp, 3)
      assertEquals(24, ConsumerPool.countBound)
      val later = (10 until 12).map(i => read(kp, s"Partition $i", SSP.kafka("orders", i))._2)
      assertEquals(Seq(false, false), later)
    } finally {
      ConsumerPool.maxConsumers = before
      ConsumerPool.clear()
    }
  }

  @Test def aPartitionsRecordsReachItsNextReaderOnWhicheverConsumerItGets(): Unit = {
    val kp = params("records")
    bounded(1) {
      val (o0, o1) = (new TopicPartition("orders", 0), new TopicPartition("orders", 1))
      val (c, _) = read(kp, "Partition 0", SSP.kafka("orders", 0))
      val left = Prefetched(java.util.List.of(record(o0, 5), record(o0, 6)), next = 7)
      ConsumerPool.release(kp, "query", TaskName.ofPartition(0), c, java.util.Map.of(o0, left))
      // Same consumer, same partition: positioned where the records end, no seek needed.
      val again =
        ConsumerPool.acquire(kp, "query", TaskName.ofPartition(0), Seq(SSP.kafka("orders", 0)))
      assertSame(c, again.consumer)
      assertEquals(left, again.prefetched.get(o0))
      ConsumerPool.release(kp, "query", TaskName.ofPartition(0), c, java.util.Map.of(o0, left))
      // Another task borrows the only consumer and moves it to its own partition.
      val other = read(kp, "Partition 1", SSP.kafka("orders", 1))._1
      assertSame(c, other)
      ConsumerPool.release(kp, "query", TaskName.ofPartition(1), other, java.util.Map.of(o1, left))
      // Partition 0's records are still there, for a consumer no longer at their end.
      val back =
        ConsumerPool.acquire(kp, "query", TaskName.ofPartition(0), Seq(SSP.kafka("orders", 0)))
      assertEquals(left.copy(positioned = false), back.prefetched.get(o0))
      // Handed over once: what that reader did not give back is gone.
      ConsumerPool.release(kp, "query", TaskName.ofPartition(0), back.consumer)
      assertTrue(
        ConsumerPool.acquire(kp, "query", TaskName.ofPartition(0), Seq(SSP.kafka("orders", 0)))
          .prefetched.isEmpty
      )
    }
  }

  @Test def consumersBeyondTheBoundAreClosedWhenTheyComeBack(): Unit = {
    val kp = params("capacity")
    bounded(2) {
      // Three readers at once: every consumer is in use, so the third reader creates one.
      val consumers = (0 until 3).map(i => read(kp, s"Partition $i", SSP.kafka("orders", i)))
      assertEquals(Seq(false, false, false), consumers.map(_._2))
      consumers.zipWithIndex.foreach { case ((c, _), i) =>
        ConsumerPool.release(kp, "query", TaskName.ofPartition(i), c)
      }
      assertEquals(Seq(true, false, false), consumers.map(c => closed(c._1)))
      assertEquals(2, ConsumerPool.idleCount)
      assertEquals(2, ConsumerPool.openCount)
    }
  }

  @Test def moreTasksThanTheBoundCreateNoConsumerAfterTheirFirstBatch(): Unit = {
    // 200 tasks on one executor, 128 consumers: every later batch borrows, none creates.
    val kp = params("many")
    bounded(128) {
      def batch() = (0 until 200).map { i =>
        val (c, reused) = read(kp, s"Partition $i", SSP.kafka("orders", i))
        ConsumerPool.release(kp, "query", TaskName.ofPartition(i), c)
        reused
      }
      assertEquals(72, batch().count(identity))
      assertTrue(batch().forall(identity), "every reader of the second batch found a consumer")
      assertEquals(128, ConsumerPool.openCount)
    }
  }

  @Test def aTaskFindsItsOwnConsumerWhileTheExecutorHoldsFewerTasksThanTheBound(): Unit = {
    val kp = params("own")
    bounded(128) {
      val first = readersAtOnce(kp, 100)
      val again = (0 until 100).map(i => read(kp, s"Partition $i", SSP.kafka("orders", i))._1)
      assertEquals(first, again)
      again.foreach(ConsumerPool.closeQuietly)
    }
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
