package streamctl.grouper

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.grouper.Fixtures._
import streamctl.system.SSP

/** Returning the previous mapping when nothing changed must give what a full regrouping gives. */
class GroupingShortcutTest {
  private def bothWays(
      c: GrouperConfig,
      prev: TaskMapping,
      counts: Map[String, Int]
  ): TaskMapping = {
    val full = Grouping.compute(c, Some(prev), counts, shortcut = false)
    assertEquals(full, Grouping.compute(c, Some(prev), counts, shortcut = true), s"previous: $prev")
    full
  }

  @Test def sameAnswerWithOrWithoutShortcut(): Unit = {
    val plain = config()("orders", "rates")
    val bcast = config("stream.rates.broadcast" -> "true")("orders", "rates")
    val counts = Map("orders" -> 4, "rates" -> 2)
    val plainFirst = Grouping(plain, None, counts)
    val bcastFirst = Grouping(bcast, None, counts)

    assertSame(plainFirst, Grouping(plain, Some(plainFirst), counts)) // the shortcut is taken
    bothWays(plain, plainFirst, counts)
    bothWays(bcast, bcastFirst, counts)
    bothWays(bcast, plainFirst, counts) // became broadcast
    bothWays(plain, bcastFirst, counts) // stopped being broadcast
    bothWays(plain, plainFirst, Map("orders" -> 8, "rates" -> 2)) // grew
    bothWays(config()("orders"), plainFirst, Map("orders" -> 4)) // stream removed
    bothWays(
      config()("orders", "rates", "users"),
      plainFirst,
      counts + ("users" -> 3)
    ) // stream added
    bothWays(
      config("grouper" -> "single")("orders", "rates"),
      plainFirst,
      counts
    ) // grouper changed

    // A previous mapping with an SSP in two tasks of a non-broadcast stream is regrouped.
    val odd = TaskMapping(
      plainFirst.initialPartitionCounts,
      plainFirst.taskSsps.updated(p(1), plainFirst.taskSsps(p(1)) + SSP.kafka("orders", 0))
    )
    assertNotSame(odd, bothWays(plain, odd, counts))
  }
}
