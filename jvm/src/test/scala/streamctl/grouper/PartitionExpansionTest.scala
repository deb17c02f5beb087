package streamctl.grouper

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.StreamctlException
import streamctl.grouper.Fixtures._
import streamctl.system.SSP

/** A stream's partition count grows under a running job: no key may change task. */
class PartitionExpansionTest {
  private val byPartition = config()("orders")

  private def grow(
      c: GrouperConfig,
      stream: String,
      from: Int,
      to: Int
  ): (TaskMapping, TaskMapping) = {
    val before = Grouping(c, None, Map(stream -> from))
    (before, Grouping(c, Some(before), Map(stream -> to)))
  }

  /**
   * Kafka's default partitioner sends a key to `hash % count`. For many hashes, the task that reads
   * the key's partition after growth must be the task that read it before.
   */
  private def assertNoKeyMoves(
      before: TaskMapping,
      after: TaskMapping,
      stream: String,
      from: Int,
      to: Int
  ): Unit =
    for (hash <- 0 until 10000)
      assertEquals(
        taskOf(before, stream, hash % from),
        taskOf(after, stream, hash % to),
        s"key hash $hash"
      )

  @Test def twoToFour(): Unit = {
    val (before, after) = grow(byPartition, "orders", 2, 4)
    assertEquals(Seq(p(0), p(1)), after.tasks)
    assertEquals(Set(SSP.kafka("orders", 0), SSP.kafka("orders", 2)), after.taskSsps(p(0)))
    assertEquals(Set(SSP.kafka("orders", 1), SSP.kafka("orders", 3)), after.taskSsps(p(1)))
    assertEquals(Map("orders" -> 2), after.initialPartitionCounts)
    assertEquals(
      Set(SSP.kafka("orders", 2), SSP.kafka("orders", 3)),
      after.addedSince(Some(before))
    )
    assertNoKeyMoves(before, after, "orders", 2, 4)
  }

  @Test def twoToEight(): Unit = {
    val (before, after) = grow(byPartition, "orders", 2, 8)
    assertEquals(Seq(p(0), p(1)), after.tasks)
    assertEquals(Set(0, 2, 4, 6), after.taskSsps(p(0)).map(_.partition))
    assertNoKeyMoves(before, after, "orders", 2, 8)
  }

  @Test def threeToSix(): Unit = {
    val (before, after) = grow(byPartition, "orders", 3, 6)
    assertEquals(Seq(p(0), p(1), p(2)), after.tasks)
    assertEquals(Set(2, 5), after.taskSsps(p(2)).map(_.partition))
    assertNoKeyMoves(before, after, "orders", 3, 6)
  }

  @Test def chainedGrowthEqualsDirectGrowth(): Unit = {
    val first = Grouping(byPartition, None, Map("orders" -> 2))
    val viaFour = Grouping(
      byPartition,
      Some(Grouping(byPartition, Some(first), Map("orders" -> 4))),
      Map("orders" -> 8)
    )
    assertEquals(Grouping(byPartition, Some(first), Map("orders" -> 8)), viaFour)
  }

  @Test def growthIsJudgedAgainstTheInitialCount(): Unit = {
    // 4 -> 6 is not a doubling, but 6 is a multiple of the initial 2: hash % 6 % 2 == hash % 2.
    val first = Grouping(byPartition, None, Map("orders" -> 2))
    val four = Grouping(byPartition, Some(first), Map("orders" -> 4))
    val six = Grouping(byPartition, Some(four), Map("orders" -> 6))
    assertEquals(Seq(p(0), p(1)), six.tasks)
    assertNoKeyMoves(first, six, "orders", 2, 6)
  }

  @Test def unchangedCountsGiveTheSameMapping(): Unit = {
    val (_, after) = grow(byPartition, "orders", 2, 4)
    assertEquals(after, Grouping(byPartition, Some(after), Map("orders" -> 4)))
  }

  @Test def sspGrouperExpandsIntoTheOriginTask(): Unit = {
    val (before, after) = grow(config("grouper" -> "ssp")("orders"), "orders", 2, 4)
    assertEquals(before.tasks, after.tasks)
    assertEquals(t("SystemStreamPartition [kafka, orders, 0]"), taskOf(after, "orders", 2))
    assertEquals(t("SystemStreamPartition [kafka, orders, 1]"), taskOf(after, "orders", 3))
  }

  @Test def singleGrouperKeepsOneTask(): Unit = {
    val (_, after) = grow(config("grouper" -> "single")("orders"), "orders", 2, 8)
    assertEquals(Seq(t("Task 0")), after.tasks)
    assertEquals(8, after.taskSsps(t("Task 0")).size)
  }

  @Test def notAMultipleIsRefusedNamingStreamAndCounts(): Unit = {
    val first = Grouping(byPartition, None, Map("orders" -> 2))
    val e = assertThrows(
      classOf[StreamctlException],
      () => Grouping(byPartition, Some(first), Map("orders" -> 3))
    )
    assertTrue(e.getMessage.contains("'orders'"), e.getMessage)
    assertTrue(e.getMessage.contains("from 2 to 3"), e.getMessage)
    assertTrue(e.getMessage.contains("initial count 2"), e.getMessage)
  }

  @Test def shrinkingIsRefusedNamingStreamAndCounts(): Unit = {
    val first = Grouping(byPartition, None, Map("orders" -> 4))
    val e = assertThrows(
      classOf[StreamctlException],
      () => Grouping(byPartition, Some(first), Map("orders" -> 2))
    )
    assertTrue(e.getMessage.contains("'orders' shrank from 4 to 2"), e.getMessage)
  }

  @Test def twoStreamsWithDifferentCountsJoinedByPartition(): Unit = {
    val c = config()("clicks", "users")
    val first = Grouping(c, None, Map("clicks" -> 4, "users" -> 2))
    assertEquals(Seq(p(0), p(1), p(2), p(3)), first.tasks)
    assertEquals(Set(SSP.kafka("clicks", 0), SSP.kafka("users", 0)), first.taskSsps(p(0)))
    assertEquals(Set(SSP.kafka("clicks", 2)), first.taskSsps(p(2)))

    // The smaller stream grows to the size of the larger: each stream keeps its own keys in
    // place, so users-2 joins users-0 in Partition 0, not clicks-2 in Partition 2.
    val usersGrew = Grouping(c, Some(first), Map("clicks" -> 4, "users" -> 4))
    assertEquals(first.tasks, usersGrew.tasks)
    assertEquals(p(0), taskOf(usersGrew, "users", 2))
    assertEquals(p(1), taskOf(usersGrew, "users", 3))
    for (i <- 0 until 4) assertEquals(p(i), taskOf(usersGrew, "clicks", i))
    assertEquals(Map("clicks" -> 4, "users" -> 2), usersGrew.initialPartitionCounts)

    // Both double together: still four tasks, each stream modulo its own initial count.
    val bothGrew = Grouping(c, Some(usersGrew), Map("clicks" -> 8, "users" -> 8))
    assertEquals(first.tasks, bothGrew.tasks)
    assertEquals(p(3), taskOf(bothGrew, "clicks", 7))
    assertEquals(p(1), taskOf(bothGrew, "users", 7))
    assertNoKeyMoves(first, bothGrew, "clicks", 4, 8)
    assertNoKeyMoves(first, bothGrew, "users", 2, 8)
  }

  @Test def pluggableAlgorithmIsUsed(): Unit = {
    val c = config("partition.expansion.algorithm" -> classOf[ToFirstPartition].getName)("orders")
    val (_, after) = grow(c, "orders", 2, 5) // accepted: this algorithm refuses nothing
    for (i <- 2 until 5) assertEquals(p(0), taskOf(after, "orders", i))
    assertEquals(p(1), taskOf(after, "orders", 1))
  }

  @Test def algorithmNamingANewPartitionIsRefused(): Unit = {
    val c =
      config("partition.expansion.algorithm" -> classOf[OutOfRangeExpansion].getName)("orders")
    val e = assertThrows(classOf[StreamctlException], () => grow(c, "orders", 2, 4))
    assertTrue(e.getMessage.contains(classOf[OutOfRangeExpansion].getName), e.getMessage)
    assertTrue(e.getMessage.contains("partition 2 of stream 'orders'"), e.getMessage)
  }
}
