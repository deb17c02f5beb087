package streamctl.grouper

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.StreamctlException
import streamctl.grouper.Fixtures._
import streamctl.system.SSP

/** `stream.<name>.broadcast=true`: every task reads every partition of that stream. */
class BroadcastTest {
  private val c = config("stream.rates.broadcast" -> "true")("orders", "rates")

  @Test def broadcastSspIsInEveryTask(): Unit = {
    val m = Grouping(c, None, Map("orders" -> 3, "rates" -> 2))
    assertEquals(Seq(p(0), p(1), p(2)), m.tasks) // tasks come from the other streams only
    for (i <- 0 until 2) assertEquals(m.tasks.toSet, m.tasksOf(SSP.kafka("rates", i)))
    for (task <- m.tasks)
      assertEquals(ssps("rates", 2), m.taskSsps(task).filter(_.stream == "rates"))
    assertEquals(Set(SSP.kafka("orders", 1)), m.taskSsps(p(1)).filter(_.stream == "orders"))
  }

  @Test def broadcastWithEachGrouper(): Unit =
    for (g <- Seq("ssp", "single")) {
      val m = Grouping(
        config("grouper" -> g, "stream.rates.broadcast" -> "true")("orders", "rates"),
        None,
        Map("orders" -> 2, "rates" -> 3)
      )
      assertEquals(if (g == "single") 1 else 2, m.tasks.size, g)
      assertTrue(m.tasks.forall(task => ssps("rates", 3).subsetOf(m.taskSsps(task))), g)
    }

  @Test def broadcastStreamMayGrowByAnyAmount(): Unit = {
    val first = Grouping(c, None, Map("orders" -> 2, "rates" -> 2))
    val m = Grouping(c, Some(first), Map("orders" -> 2, "rates" -> 3))
    assertEquals(first.tasks.toSet, m.tasksOf(SSP.kafka("rates", 2)))
    assertEquals(2, m.initialPartitionCounts("rates"))
  }

  @Test def aStreamNoLongerBroadcastGrowsFromTheCountItWasGroupedAt(): Unit = {
    val plain = config()("orders", "rates")
    val grown = Grouping(
      c,
      Some(Grouping(c, None, Map("orders" -> 2, "rates" -> 2))),
      Map("orders" -> 2, "rates" -> 3)
    )
    val regrouped = Grouping(plain, Some(grown), Map("orders" -> 2, "rates" -> 3))
    assertEquals(3, regrouped.initialPartitionCounts("rates"))
    /* 3 -> 6: a key of rates-4 (hash % 6 == 4) was in rates-1 (hash % 3 == 1), and stays in its
     * task. */
    val doubled = Grouping(plain, Some(regrouped), Map("orders" -> 2, "rates" -> 6))
    assertEquals(
      regrouped.tasksOf(SSP.kafka("rates", 1)),
      doubled.tasksOf(SSP.kafka("rates", 4))
    )
    val e = assertThrows(
      classOf[StreamctlException],
      () => { Grouping(plain, Some(regrouped), Map("orders" -> 2, "rates" -> 4)); () }
    )
    assertTrue(e.getMessage.contains("'rates' grew from 3 to 4"), e.getMessage)
  }

  @Test def broadcastStreamMayNotShrink(): Unit = {
    val first = Grouping(c, None, Map("orders" -> 2, "rates" -> 3))
    val e = assertThrows(
      classOf[StreamctlException],
      () => Grouping(c, Some(first), Map("orders" -> 2, "rates" -> 1))
    )
    assertTrue(e.getMessage.contains("'rates' shrank from 3 to 1"), e.getMessage)
  }

  @Test def expandingTheOtherStreamCreatesNoTask(): Unit = {
    val first = Grouping(c, None, Map("orders" -> 2, "rates" -> 2))
    val m = Grouping(c, Some(first), Map("orders" -> 4, "rates" -> 2))
    assertEquals(Seq(p(0), p(1)), m.tasks)
    assertEquals(Set(p(0), p(1)), m.tasksOf(SSP.kafka("rates", 0)))
    assertEquals(p(0), taskOf(m, "orders", 2))
  }

  @Test def onlyBroadcastStreamsIsAnError(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => Grouping(config("stream.rates.broadcast" -> "true")("rates"), None, Map("rates" -> 2))
    )
    assertTrue(e.getMessage.contains("Every input stream is broadcast (rates)"), e.getMessage)
  }

  @Test def streamThatStopsBeingBroadcastIsRegrouped(): Unit = {
    val first = Grouping(c, None, Map("orders" -> 2, "rates" -> 2))
    val m = Grouping(config()("orders", "rates"), Some(first), Map("orders" -> 2, "rates" -> 2))
    assertEquals(p(1), taskOf(m, "rates", 1))
    for (i <- 0 until 2)
      assertEquals(first.tasksOf(SSP.kafka("orders", i)), m.tasksOf(SSP.kafka("orders", i)))
  }

  @Test def streamThatBecomesBroadcastReachesEveryTask(): Unit = {
    val first = Grouping(config()("orders", "rates"), None, Map("orders" -> 2, "rates" -> 2))
    val m = Grouping(c, Some(first), Map("orders" -> 2, "rates" -> 2))
    assertEquals(Set(p(0), p(1)), m.tasksOf(SSP.kafka("rates", 0)))
  }
}
