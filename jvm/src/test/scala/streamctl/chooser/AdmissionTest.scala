package streamctl.chooser

import scala.language.reflectiveCalls

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.chooser.ChooserFixtures._
import streamctl.system.{SSP, SystemAdmin}

class AdmissionTest {
  private val cur0 = ssp("currency", 0); private val cur1 = ssp("currency", 1)
  private val tx0 = ssp("tx", 0); private val tx1 = ssp("tx", 1)
  private val live0 = ssp("live", 0); private val back0 = ssp("backfill", 0);
  private val back1 = ssp("backfill", 1)
  private val names = Seq("currency", "tx", "live", "backfill")

  private def cfg(kv: (String, String)*) = ChooserConfig.parse(kv.toMap, names)
  private val bootstrap = cfg("stream.currency.bootstrap" -> "true")

  @Test def withoutBudgetEverythingAvailable(): Unit = {
    val plan =
      Admission.plan(Map(tx0 -> SspBacklog(5, 90), tx1 -> SspBacklog(7, 7)), cfg(), Map.empty, None)
    assertEquals(Map(tx0 -> 90L, tx1 -> 7L), plan.ends)
    assertFalse(plan.bootstrapping)
  }

  @Test def aBudgetSmallerThanThePartitionsReachesEachOfThemInTurn(): Unit = {
    val ssps = Seq(tx0, tx1, live0)
    var starts = ssps.map(_ -> 0L).toMap
    for (_ <- 1 to 6) {
      val backlog = starts.map { case (s, o) => s -> SspBacklog(o, o + 1000) }
      starts = Admission.plan(backlog, cfg(), Map.empty, Some(2)).ends
    }
    assertEquals(Map(tx0 -> 4L, tx1 -> 4L, live0 -> 4L), starts, "12 records over three partitions")
  }

  @Test def aHeadBehindTheStartAdmitsNothing(): Unit = {
    val plan = Admission.plan(Map(tx0 -> SspBacklog(50, 40)), cfg(), Map.empty, Some(10))
    assertEquals(Map(tx0 -> 50L), plan.ends)
  }

  @Test def bootstrapBlocksEveryOtherStream(): Unit = {
    val backlog =
      Map(cur0 -> SspBacklog(0, 80), cur1 -> SspBacklog(0, 30), tx0 -> SspBacklog(0, 1000))
    val plan = Admission.plan(backlog, bootstrap, Map(cur0 -> 50L, cur1 -> 30L), Some(1000))
    assertTrue(plan.bootstrapping)
    // Read up to the start-time heads only (currency-0 got 30 more records since), nothing of tx,
    // and the leftover budget is not passed on.
    assertEquals(Map(cur0 -> 50L, cur1 -> 30L, tx0 -> 0L), plan.ends)
  }

  @Test def bootstrapUnderASmallBudgetSharesItAmongBootstrapSsps(): Unit = {
    val backlog =
      Map(cur0 -> SspBacklog(0, 50), cur1 -> SspBacklog(0, 30), tx0 -> SspBacklog(0, 1000))
    val plan = Admission.plan(backlog, bootstrap, Map(cur0 -> 50L, cur1 -> 30L), Some(20))
    assertEquals(Map(cur0 -> 10L, cur1 -> 10L, tx0 -> 0L), plan.ends)
  }

  @Test def anEmptyBootstrapPartitionDoesNotBlock(): Unit = {
    // currency-1 was empty at start (head 0) and got records since: they are ordinary records.
    val backlog =
      Map(cur0 -> SspBacklog(0, 10), cur1 -> SspBacklog(0, 5), tx0 -> SspBacklog(0, 100))
    val heads = Map(cur0 -> 10L, cur1 -> 0L)
    val first = Admission.plan(backlog, bootstrap, heads, None)
    assertEquals(Map(cur0 -> 10L, cur1 -> 0L, tx0 -> 0L), first.ends)
    val next = backlog.map { case (s, b) => s -> b.copy(start = first.ends(s)) }
    val second = Admission.plan(next, bootstrap, heads, None)
    assertFalse(second.bootstrapping)
    assertEquals(Map(cur0 -> 10L, cur1 -> 5L, tx0 -> 100L), second.ends)
  }

  @Test def aBootstrapSspWithoutHeadIsNamed(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => Admission.plan(Map(cur0 -> SspBacklog(0, 5)), bootstrap, Map.empty, None)
    )
    assertTrue(e.getMessage.contains("kafka/currency/0"), e.getMessage)
  }

  @Test def higherTierTakesTheBudgetFirst(): Unit = {
    val live = cfg("stream.live.priority" -> "10")
    val small =
      Map(live0 -> SspBacklog(0, 30), back0 -> SspBacklog(0, 1000), back1 -> SspBacklog(0, 1000))
    assertEquals(
      Map(live0 -> 30L, back0 -> 35L, back1 -> 35L),
      Admission.plan(small, live, Map.empty, Some(100)).ends
    )
    val big = small.updated(live0, SspBacklog(0, 300))
    assertEquals(
      Map(live0 -> 100L, back0 -> 0L, back1 -> 0L),
      Admission.plan(big, live, Map.empty, Some(100)).ends
    )
  }

  @Test def theLowestPriorityAnIntHoldsIsTheLowestTier(): Unit = {
    // Negating Int.MinValue overflows back to itself: a tier order by -priority put it first.
    val lowest = cfg("stream.backfill.priority" -> Int.MinValue.toString)
    val backlog = Map(live0 -> SspBacklog(0, 150), back0 -> SspBacklog(0, 400))
    assertEquals(
      Map(live0 -> 100L, back0 -> 0L),
      Admission.plan(backlog, lowest, Map.empty, Some(100)).ends
    )
  }

  @Test def fairShareIsWaterFilledAndDeterministic(): Unit = {
    val backlog =
      Map(tx0 -> SspBacklog(10, 13), tx1 -> SspBacklog(0, 500), back0 -> SspBacklog(0, 500))
    val plan = Admission.plan(backlog, cfg(), Map.empty, Some(100))
    assertEquals(
      Map(tx0 -> 13L, tx1 -> 48L, back0 -> 49L),
      plan.ends
    ) // remainder: backfill-0 sorts first
    assertEquals(100L, plan.admitted(backlog))
    assertEquals(
      plan,
      Admission.plan(
        scala.collection.immutable.ListMap(backlog.toSeq.reverse: _*),
        cfg(),
        Map.empty,
        Some(100)
      )
    )
  }

  private val ts: Map[SSP, IndexedSeq[Long]] = Map(
    tx0 -> (0 until 1000).map(1000L + _), // 1 record/ms
    tx1 -> (0 until 100).map(1000L + 10L * _)
  ) // 1 record/10 ms
  private val oft: (SSP, Long) => Long =
    (s, t) => { val i = ts(s).indexWhere(_ >= t); if (i < 0) -1L else i.toLong }

  @Test def timeAlignedAdvancesOneFrontier(): Unit = {
    val backlog = Map(tx0 -> SspBacklog(0, 1000, 1000), tx1 -> SspBacklog(0, 100, 1000))
    val plan = Admission.plan(backlog, cfg("chooser" -> "time-aligned"), Map.empty, Some(220), oft)
    assertEquals(Some(1200L), plan.frontier)
    assertEquals(Map(tx0 -> 200L, tx1 -> 20L), plan.ends)
  }

  @Test def timeAlignedWithinTiersAndFairShareWhileBootstrapping(): Unit = {
    val c = cfg(
      "chooser" -> "time-aligned",
      "stream.tx.priority" -> "1",
      "stream.currency.bootstrap" -> "true"
    )
    val backlog = Map(
      tx0 -> SspBacklog(0, 1000, 1000),
      tx1 -> SspBacklog(0, 100, 1000),
      cur0 -> SspBacklog(0, 500)
    )
    val booting = Admission.plan(backlog, c, Map(cur0 -> 40L), Some(30), oft)
    assertEquals(Map(tx0 -> 0L, tx1 -> 0L, cur0 -> 30L), booting.ends)
    val after = Admission.plan(
      backlog.updated(cur0, SspBacklog(40, 500)),
      c,
      Map(cur0 -> 40L),
      Some(110),
      oft
    )
    assertEquals(Map(tx0 -> 100L, tx1 -> 10L, cur0 -> 40L), after.ends)
  }

  @Test def timeAlignedNeedsAnOffsetsForTimesFunction(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () =>
        Admission.plan(
          Map(tx0 -> SspBacklog(0, 10)),
          cfg("chooser" -> "time-aligned"),
          Map.empty,
          Some(5)
        )
    )
    assertTrue(e.getMessage.contains("kafka/tx/0"), e.getMessage)
  }

  @Test def budgetMustBePositive(): Unit =
    assertThrows(
      classOf[StreamctlException],
      () => Admission.plan(Map.empty, cfg(), Map.empty, Some(0))
    )

  @Test def adminTimeIndexMakesOneRequestPerProbe(): Unit = {
    val admin = new SystemAdmin {
      var asked = List.empty[Map[SSP, Long]]
      def system = "kafka"
      def partitionCounts(streams: Set[String]) = Map.empty
      def oldestOffsets(ssps: Set[SSP]) = Map.empty
      def upcomingOffsets(ssps: Set[SSP]) = Map.empty
      def offsetsForTimestamps(timestamps: Map[SSP, Long]) = {
        asked ::= timestamps
        timestamps.map { case (s, t) =>
          s -> { val i = ts(s).indexWhere(_ >= t); if (i < 0) ts(s).size.toLong else i.toLong }
        }
      }
    }
    val backlog = Map(tx0 -> SspBacklog(0, 1000, 1000), tx1 -> SspBacklog(0, 100, 1000))
    val index = new AdminTimeIndex(admin, backlog.keySet)
    val plan = Admission.plan(
      backlog,
      cfg("chooser" -> "time-aligned"),
      Map.empty,
      Some(220),
      index.offsetForTime
    )
    assertEquals(Map(tx0 -> 200L, tx1 -> 20L), plan.ends)
    assertTrue(admin.asked.forall(_.keySet == backlog.keySet))
    assertTrue(admin.asked.size < 25, s"${admin.asked.size} requests")
  }
}
