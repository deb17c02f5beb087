package streamctl.chooser

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.plan.{BatchPlan, PlanningContext, SourcePosition, SourceState}
import streamctl.startpoint.FakeSystemAdmin
import streamctl.system.{SSP, TaskName}

/**
 * The admission planning step over a system held in memory: chooser state in the offset, and the
 * ends it plans.
 */
class AdmissionStepTest {
  private val cur0 = SSP.kafka("cur", 0); private val cur1 = SSP.kafka("cur", 1);
  private val cur2 = SSP.kafka("cur", 2)
  private val tx0 = SSP.kafka("tx", 0); private val tx1 = SSP.kafka("tx", 1)

  private def config(kv: (String, String)*) = ChooserConfig.parse(kv.toMap, Seq("cur", "tx"))
  private val bootstrap = config("stream.cur.bootstrap" -> "true")

  /** Tasks by partition number, every SSP at `pos`. */
  private def at(pos: Map[SSP, Long]): BatchPlan =
    BatchPlan(SourcePosition(pos.groupBy(_._1.partition).map { case (p, m) =>
      TaskName(s"Partition $p") -> m
    }))

  private def next(plan: BatchPlan, ends: Map[SSP, Long]): BatchPlan =
    BatchPlan(plan.end((_, s, b) => math.max(b, ends(s))))

  /**
   * Runs `step` on `plan` whose SSPs may be read up to `reachable`; the plan after it, and where
   * each SSP ends.
   */
  private def run(
      step: AdmissionStep,
      plan: BatchPlan,
      reachable: Map[SSP, Long],
      budget: Option[Long]
  ): (BatchPlan, Map[SSP, Long]) = {
    val planned = step(plan.copy(heads = reachable), PlanningContext(budget = budget))
    (planned, planned.ends)
  }

  @Test def headsAreRecordedAtTheFirstPlanAndKeptWhileBootstrapComesFirst(): Unit = {
    val step = new AdmissionStep(bootstrap, new FakeSystemAdmin)
    val first = at(Map(cur0 -> 0L, cur1 -> 0L, cur2 -> 0L, tx0 -> 0L, tx1 -> 0L))
    val (p1, e1) =
      run(step, first, Map(cur0 -> 10L, cur1 -> 5L, cur2 -> 0L, tx0 -> 100L, tx1 -> 100L), None)
    // The empty partition cur-2 does not hold anything back; tx waits.
    assertEquals(Map(cur0 -> 10L, cur1 -> 5L, cur2 -> 0L, tx0 -> 0L, tx1 -> 0L), e1)
    assertEquals(
      Map(cur0 -> 10L, cur1 -> 5L, cur2 -> 0L),
      p1.state(ChooserState.Codec).bootstrapHeads
    )

    // Currency grew after the start: its start-time heads stay, and bootstrapping is over.
    val (p2, e2) = run(
      step,
      next(p1, e1),
      Map(cur0 -> 30L, cur1 -> 5L, cur2 -> 3L, tx0 -> 100L, tx1 -> 100L),
      None
    )
    assertEquals(Map(cur0 -> 30L, cur1 -> 5L, cur2 -> 3L, tx0 -> 100L, tx1 -> 100L), e2)
    assertEquals(
      Map(cur0 -> 10L, cur1 -> 5L, cur2 -> 0L),
      p2.state(ChooserState.Codec).bootstrapHeads
    )
  }

  @Test def aBootstrapPartitionHeldByAnExpansionGetsItsHeadOnceItCanBeRead(): Unit = {
    val step = new AdmissionStep(bootstrap, new FakeSystemAdmin)
    val (p1, e1) = run(step, at(Map(cur0 -> 0L, tx0 -> 0L)), Map(cur0 -> 0L, tx0 -> 10L), None)
    // cur grew to two partitions; cur-1 (7 records) is held until cur-0 passed the growth.
    val grown = next(p1, e1)
    val held = grown.copy(
      begins = grown.begins.updated(TaskName("Partition 1"), Map(cur1 -> 0L)),
      held = Set(cur1)
    )
    val (p2, e2) = run(step, held, Map(cur0 -> 0L, cur1 -> 7L, tx0 -> 20L), None)
    assertEquals(0L, e2(cur1), "held")
    assertFalse(p2.state(ChooserState.Codec).bootstrapHeads.contains(cur1), "no head while held")
    // Released: cur-1 is bootstrapped to its head before tx goes on.
    val (p3, e3) = run(step, next(p2, e2), Map(cur0 -> 0L, cur1 -> 7L, tx0 -> 30L), None)
    assertEquals(7L, p3.state(ChooserState.Codec).bootstrapHeads(cur1))
    assertEquals(7L, e3(cur1))
    assertEquals(e2(tx0), e3(tx0), "tx waits while cur-1 is bootstrapped")
  }

  @Test def bootstrapUnderABudgetTakesSeveralBatchesReadingOnlyBootstrapSsps(): Unit = {
    val step = new AdmissionStep(bootstrap, new FakeSystemAdmin)
    val reachable = Map(cur0 -> 10L, cur1 -> 5L, tx0 -> 100L)
    val (p1, e1) = run(step, at(Map(cur0 -> 0L, cur1 -> 0L, tx0 -> 0L)), reachable, Some(8))
    assertEquals(Map(cur0 -> 4L, cur1 -> 4L, tx0 -> 0L), e1)
    val (p2, e2) = run(step, next(p1, e1), reachable, Some(8))
    // The leftover budget of a bootstrapping batch is not passed on to tx.
    assertEquals(Map(cur0 -> 10L, cur1 -> 5L, tx0 -> 0L), e2)
    val (_, e3) = run(step, next(p2, e2), reachable, Some(8))
    assertEquals(Map(cur0 -> 10L, cur1 -> 5L, tx0 -> 8L), e3)
  }

  @Test def aBootstrapPartitionThatAppearsLaterGetsItsHeadThen(): Unit = {
    val step = new AdmissionStep(bootstrap, new FakeSystemAdmin)
    val (p1, e1) = run(step, at(Map(cur0 -> 0L, tx0 -> 0L)), Map(cur0 -> 0L, tx0 -> 10L), None)
    assertEquals(10L, e1(tx0))
    val grown = next(p1, e1).begin(TaskName("Partition 1"), cur1, 0L)
    val (p2, e2) = run(step, grown, Map(cur0 -> 0L, cur1 -> 7L, tx0 -> 20L), None)
    assertEquals(Map(cur0 -> 0L, cur1 -> 7L, tx0 -> 10L), e2)
    assertEquals(Map(cur0 -> 0L, cur1 -> 7L), p2.state(ChooserState.Codec).bootstrapHeads)
  }

  @Test def aHeadAboveWhatCanBeReadNowIsLowered(): Unit = {
    // The topic was truncated (fail.on.data.loss=false): head 50 will never be reached again.
    val step = new AdmissionStep(bootstrap, new FakeSystemAdmin)
    val before = at(Map(cur0 -> 20L, tx0 -> 0L)).withState(_.updated(
      ChooserState.Codec,
      ChooserState(Map(cur0 -> 50L), None)
    ))
    val (p, e) = run(step, before, Map(cur0 -> 20L, tx0 -> 10L), None)
    assertEquals(Map(cur0 -> 20L), p.state(ChooserState.Codec).bootstrapHeads)
    assertEquals(10L, e(tx0))
  }

  @Test def withoutBootstrapOrTimeAlignmentTheOffsetCarriesNoChooserState(): Unit = {
    val step = new AdmissionStep(config("stream.tx.priority" -> "1"), new FakeSystemAdmin)
    val (p, e) = run(step, at(Map(cur0 -> 0L, tx0 -> 0L)), Map(cur0 -> 100L, tx0 -> 6L), Some(10))
    assertEquals(Map(cur0 -> 4L, tx0 -> 6L), e)
    assertEquals(SourceState.empty, p.state)
  }

  @Test def timeAlignedRecordsItsFrontierAndSearchesFromThereNextTime(): Unit = {
    val a = SSP.kafka("cur", 0); val b = SSP.kafka("tx", 0)
    val t0 = 1700000000000L
    // Even and odd milliseconds: every batch of 10 takes the next 10 instants of both streams.
    val admin = new FakeSystemAdmin().add(
      a,
      0,
      (0 until 100).map(i => t0 + 2 * i)
    ).add(b, 0, (0 until 100).map(i => t0 + 2 * i + 1))
    val step = new AdmissionStep(config("chooser" -> "time-aligned"), admin)
    val reachable = Map(a -> 100L, b -> 100L)
    val (p1, e1) = run(step, at(Map(a -> 0L, b -> 0L)), reachable, Some(10))
    assertEquals(Map(a -> 5L, b -> 5L), e1)
    assertEquals(Some(t0 + 10), p1.state(ChooserState.Codec).frontier)
    val firstSearch = admin.calls("offsetsForTimestamps")

    val (p2, e2) = run(step, next(p1, e1), reachable, Some(10))
    assertEquals(Map(a -> 10L, b -> 10L), e2)
    assertEquals(Some(t0 + 20), p2.state(ChooserState.Codec).frontier)
    val secondSearch = admin.calls("offsetsForTimestamps") - firstSearch
    assertTrue(
      secondSearch < firstSearch / 2,
      s"$secondSearch probes from the last frontier, $firstSearch without"
    )
  }
}
