package streamctl.startpoint

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.metadata.{InMemoryMetadataStore, StoreLayout}
import streamctl.plan.{BatchPlan, PlanningContext, SourcePosition}
import streamctl.planner.SourceStates
import streamctl.startpoint.Startpoint._
import streamctl.system.{SSP, SystemAdmin, TaskName}

/**
 * The planning step against an in-memory store and a fake Kafka. A broadcast SSP (read by several
 * tasks) is built directly in the offset, so no grouper is involved; the Python tests run the same
 * cases against a real broker and Spark.
 */
class StartpointStepTest {
  private val orders0 = SSP.kafka("orders", 0)
  private val orders1 = SSP.kafka("orders", 1)
  private val rates = SSP.kafka("rates", 0)
  private val (t0, t1) = (TaskName("Partition 0"), TaskName("Partition 1"))
  // Checkpointed at offset 8 everywhere; rates read by both tasks.
  private val previous = SourcePosition(Map(
    t0 -> Map(orders0 -> 8L, rates -> 8L),
    t1 -> Map(orders1 -> 8L, rates -> 8L)
  ))

  private val admin = new FakeSystemAdmin()
    .add(orders0, 2, Seq.tabulate(10)(i => 100L + i))
    .add(orders1, 0, Seq.tabulate(10)(i => 100L + i))
    .add(rates, 0, Seq.tabulate(10)(i => 100L + i))
  private val store = new InMemoryMetadataStore
  private val manager = new StartpointManager(store)

  private def step() = new StartpointStep(() => store, admin, Seq("orders", "rates"), "mem://store")
  private def endOf(plan: BatchPlan): SourcePosition = plan.end((_, _, b) => b + 1)

  // A step that keeps what it resolved in the store until the applying batch commits.
  private def keeping(kafka: SystemAdmin) =
    new StartpointStep(
      () => store,
      kafka,
      Seq("orders", "rates"),
      "mem://store",
      resolvedKey = Some("source-0")
    )

  @Test def aRunThatDiedBeforeItsApplyingBatchWasLoggedIsResumedWithItsResolution(): Unit = {
    // A real-time batch is logged only as it ends: the first run resolved `upcoming` to 10, read
    // from there and died; meanwhile producers wrote on. The next run begins at 10 again.
    def run(heads: Int) = {
      val grown = new FakeSystemAdmin()
        .add(orders0, 2, Seq.tabulate(heads - 2)(i => 100L + i))
        .add(orders1, 0, Seq.tabulate(heads)(i => 100L + i))
        .add(rates, 0, Seq.tabulate(heads)(i => 100L + i))
      keeping(grown)
    }
    manager.write(orders1, Upcoming(1))
    assertEquals(
      Map(t1 -> Map(orders1 -> 10L)),
      endOf(run(10)(BatchPlan(previous), PlanningContext())).starts
    )
    val again = endOf(run(15)(BatchPlan(previous), PlanningContext()))
    assertEquals(Map(t1 -> Map(orders1 -> 10L)), again.starts, "not 15: offsets 10 to 14 were read")
    // That batch commits: the startpoint and the kept resolution go.
    run(15).committed(again)
    assertEquals(None, manager.read(orders1, t1))
    assertEquals(None, store.get(StoreLayout.ResolvedNamespace, "source-0"))
  }

  @Test def aStartpointRewrittenAfterARunDiedIsResolvedAfresh(): Unit = {
    def run() = keeping(admin)
    manager.write(orders1, Specific(3, 1))
    assertEquals(
      Map(t1 -> Map(orders1 -> 3L)),
      endOf(run()(BatchPlan(previous), PlanningContext())).starts
    )
    manager.write(orders1, t1, Specific(6, 2)) // the user corrects it before the next start
    assertEquals(
      Map(t1 -> Map(orders1 -> 6L)),
      endOf(run()(BatchPlan(previous), PlanningContext())).starts
    )
  }

  @Test def sspOnlyStartpointReachesEveryTaskAndTaskLevelWins(): Unit = {
    manager.write(rates, Oldest(1))
    manager.write(rates, t1, Specific(5, 2))
    val end = endOf(step()(BatchPlan(previous), PlanningContext()))
    assertEquals(Map(t0 -> Map(rates -> 0L), t1 -> Map(rates -> 5L)), end.starts)
    assertEquals(Some(8L), end.startOf(previous, t0, orders0))
    val applied = end.state(AppliedStartpoints.Codec).applied
    assertEquals(Set((rates, t0), (rates, t1)), applied.keySet)
    assertEquals(Oldest(1), applied((rates, t0)).startpoint)
    assertEquals(None, manager.read(rates), "the SSP-only key is replaced by its task copies")
    assertEquals(Some(Oldest(1)), manager.read(rates, t0))
  }

  /**
   * The first planning of a step whose Kafka answers the first resolution only after `rewrite` ran:
   * a user correcting a startpoint while the query starts. The batch's starts.
   */
  private def startsWhenRewrittenDuringResolution(rewrite: => Unit)
      : Map[TaskName, Map[SSP, Long]] = {
    var rewritten = false
    val slow = new FakeSystemAdmin() {
      override def oldestOffsets(ssps: Set[SSP]): Map[SSP, Long] = {
        if (!rewritten) { rewritten = true; rewrite }
        super.oldestOffsets(ssps)
      }
    }.add(orders0, 2, Seq.tabulate(10)(i => 100L + i))
      .add(orders1, 0, Seq.tabulate(10)(i => 100L + i))
      .add(rates, 0, Seq.tabulate(10)(i => 100L + i))
    val s = new StartpointStep(() => store, slow, Seq("orders", "rates"), "mem://store")
    endOf(s(BatchPlan(previous), PlanningContext())).starts
  }

  @Test def aStartpointRewrittenWhileTheQueryResolvesIsTheOneApplied(): Unit = {
    manager.write(orders0, Specific(4, 1))
    val starts = startsWhenRewrittenDuringResolution(manager.write(orders0, Timestamp(105, 2)))
    assertEquals(Map(t0 -> Map(orders0 -> 7L)), starts, "the timestamp's offset, not 4")
    assertEquals(Some(Timestamp(105, 2)), manager.read(orders0, t0))
    assertEquals(None, manager.read(orders0))
  }

  @Test def aTaskLevelStartpointRewrittenWhileTheQueryResolvesIsTheOneApplied(): Unit = {
    manager.write(orders0, t0, Specific(4, 1))
    val starts = startsWhenRewrittenDuringResolution(manager.write(orders0, t0, Timestamp(105, 2)))
    assertEquals(Map(t0 -> Map(orders0 -> 7L)), starts, "the timestamp's offset, not 4")
  }

  @Test def aQueryLoggingInTheBackgroundIsRefusedWhileStartpointsWaitAndTheStoreIsKept(): Unit = {
    def inBackground() =
      new StartpointStep(
        () => store,
        admin,
        Seq("orders", "rates"),
        "mem://store",
        Nil,
        () => Some(true)
      )
    assertEquals(
      BatchPlan(previous),
      inBackground()(BatchPlan(previous), PlanningContext()),
      "none stored"
    )
    manager.write(rates, Oldest(1))
    val e = assertThrows(
      classOf[StreamctlException],
      () => { inBackground()(BatchPlan(previous), PlanningContext()); () }
    )
    assertTrue(e.getMessage.contains("'asyncProgressTrackingEnabled' set to false"), e.getMessage)
    assertEquals(Some(Oldest(1)), manager.read(rates), "not fanned out")
    assertEquals(None, manager.read(rates, t0))
  }

  @Test def anEngineThatCannotBeReadIsTakenAsLoggingInLine(): Unit = {
    manager.write(rates, Oldest(1))
    val unknown =
      new StartpointStep(() => store, admin, Seq("orders", "rates"), "mem://store", Nil, () => None)
    val end = endOf(unknown(BatchPlan(previous), PlanningContext()))
    assertEquals(Map(t0 -> Map(rates -> 0L), t1 -> Map(rates -> 0L)), end.starts)
  }

  @Test def withoutStartpointsThePlanIsUntouched(): Unit = {
    val plan = step()(BatchPlan(previous), PlanningContext())
    assertEquals(previous.json, endOf(plan).copy(tasks = previous.tasks).json)
    assertEquals(BatchPlan(previous), plan)
  }

  @Test def deletedOnlyAfterCommitAndARewrittenOneIsKept(): Unit = {
    manager.write(orders0, Timestamp(105, 1))
    manager.write(orders1, Upcoming(1))
    val s = step()
    val end = endOf(s(BatchPlan(previous), PlanningContext()))
    assertEquals(Map(t0 -> Map(orders0 -> 7L), t1 -> Map(orders1 -> 10L)), end.starts)
    assertEquals(2, manager.list().size, "still there while the batch runs")
    manager.write(orders1, t1, Upcoming(99)) // a user rewrites one meanwhile
    s.committed(end)
    assertEquals(Seq(Some(Upcoming(99))), Seq(manager.read(orders1, t1)))
    assertEquals(1, manager.list().size)
    // The next batch carries no record, and the rewritten one waits for the next restart.
    val next = endOf(s(BatchPlan(end), PlanningContext()))
    assertTrue(next.state(AppliedStartpoints.Codec).isEmpty)
    assertTrue(next.starts.isEmpty)
  }

  @Test def aRestartRecognisesWhatTheLoggedBatchAppliedAndDeletesIt(): Unit = {
    manager.write(orders0, Specific(4, 1))
    val end = endOf(step()(BatchPlan(previous), PlanningContext()))
    // Crash before the commit: nothing deleted. A new run replays `end`, then plans from it.
    assertEquals(Some(Specific(4, 1)), manager.read(orders0, t0))
    manager.write(orders1, Specific(3, 7)) // written while the query was down
    val afterRestart = endOf(step()(BatchPlan(end), PlanningContext()))
    assertEquals(Map(t1 -> Map(orders1 -> 3L)), afterRestart.starts, "applied once, not twice")
    assertEquals(Set((orders1, t1)), afterRestart.state(AppliedStartpoints.Codec).applied.keySet)
    assertEquals(None, manager.read(orders0, t0))
  }

  @Test def writtenWhileRunningWaitsForTheNextRestart(): Unit = {
    val s = step()
    val first = endOf(s(BatchPlan(previous), PlanningContext()))
    manager.write(orders0, Oldest(5))
    assertTrue(endOf(s(BatchPlan(first), PlanningContext())).starts.isEmpty)
    assertEquals(
      Map(t0 -> Map(orders0 -> 2L)),
      endOf(step()(BatchPlan(first), PlanningContext())).starts
    )
  }

  @Test def aPatternQuerysStartpointForAMissingPartitionSaysSo(): Unit = {
    // subscribePattern names no streams: the query reads what its grouping holds.
    manager.write(SSP.kafka("orders", 7), Oldest(1))
    val pattern = new StartpointStep(() => store, admin, Nil, "mem://store")
    val m = assertThrows(
      classOf[StreamctlException],
      () => pattern(BatchPlan(previous), PlanningContext())
    ).getMessage
    assertTrue(m.contains("Partition 7 of stream 'orders' does not exist (a stored startpoint)"), m)
  }

  @Test def startpointsTheQueryCannotApplyStopItNamingEachKeyWithNothingMoved(): Unit = {
    manager.write(
      rates,
      Oldest(1)
    ) // fine by itself: still not fanned out when the start is refused
    manager.write(SSP.kafka("payments", 0), Oldest(1))
    manager.write(SSP.kafka("orders", 7), Oldest(1))
    manager.write(orders0, t1, Oldest(1))
    val m = assertThrows(
      classOf[StreamctlException],
      () => step()(BatchPlan(previous), PlanningContext())
    ).getMessage
    assertTrue(
      m.contains("key 'kafka/payments/0'") && m.contains("does not read stream 'payments'"),
      m
    )
    assertTrue(
      m.contains(
        "key 'kafka/orders/7' (oldest): Partition 7 of stream 'orders' does not exist (a stored startpoint): it has 2 partitions (0..1)"
      ),
      m
    )
    assertTrue(
      m.contains("key 'kafka/orders/0/Partition 1'") && m.contains(
        "task 'Partition 1' does not read it (read by 'Partition 0')"
      ),
      m
    )
    assertTrue(
      m.contains("mem://store") && m.contains("startpoints list") && m.contains(
        "startpoints delete"
      ),
      m
    )
    assertEquals(Some(Oldest(1)), manager.read(rates))
    assertEquals(4, manager.list().size)
  }

  @Test def aPartitionKafkaHasButNoTaskReadsIsNotCalledMissing(): Unit = {
    // The query reads orders-0 only (option 'assign'); Kafka has orders-1 as well.
    val onlyOrders0 = SourcePosition(Map(t0 -> Map(orders0 -> 8L)))
    manager.write(orders1, Oldest(1))
    val m = assertThrows(
      classOf[StreamctlException],
      () =>
        new StartpointStep(() => store, admin, Seq("orders"), "mem://store")(
          BatchPlan(onlyOrders0),
          PlanningContext()
        )
    ).getMessage
    assertTrue(
      m.contains(
        "key 'kafka/orders/1' (oldest): no task of this query reads partition 1 of stream 'orders' (it reads 0)"
      ),
      m
    )
    assertFalse(m.contains("does not exist"), m)
  }

  @Test def corruptJsonStopsTheQueryNamingTheKeyWithNothingMoved(): Unit = {
    manager.write(rates, Oldest(1))
    store.put(StoreLayout.StartpointsNamespace, "kafka/orders/1", "{not json")
    val m = assertThrows(
      classOf[StreamctlException],
      () => step()(BatchPlan(previous), PlanningContext())
    ).getMessage
    assertTrue(m.contains("'kafka/orders/1'") && m.contains("does not start"), m)
    assertEquals(Some(Oldest(1)), manager.read(rates))
  }

  @Test def anOffsetBeyondTheEndStopsTheQueryNamingTheKeyWrittenWithNothingMoved(): Unit = {
    manager.write(orders0, Specific(50, 1))
    manager.write(rates, Specific(60, 1)) // broadcast: one problem, named once by its key
    manager.write(orders1, Oldest(1)) // fine by itself: not fanned out either
    val m = assertThrows(
      classOf[StreamctlException],
      () => step()(BatchPlan(previous), PlanningContext())
    ).getMessage
    assertTrue(
      m.contains("key 'kafka/orders/0': offset 50 is beyond the end") && m.contains("2 to 12"),
      m
    )
    assertEquals(1, "key 'kafka/rates/0'".r.findAllIn(m).size, m)
    assertTrue(m.contains("2 startpoints"), m)
    assertEquals(
      Seq("kafka/orders/0", "kafka/orders/1", "kafka/rates/0"),
      manager.list().map(_.key.storeKey),
      "the store as the user wrote it: no task-level copy, no key removed"
    )
  }

  @Test def appliedRecordRoundTripsThroughTheOffsetLog(): Unit = {
    manager.write(rates, Timestamp(500, 3)) // later than every message: the end, flagged
    val end = endOf(step()(BatchPlan(previous), PlanningContext()))
    val again = SourceStates.parse(end.json)
    assertEquals(end.state(AppliedStartpoints.Codec), again.state(AppliedStartpoints.Codec))
    assertTrue(again.state(AppliedStartpoints.Codec).applied((rates, t1)).beyondData)
    assertTrue(end.json.contains("\"endOfPartition\":true"), end.json)
  }

  @Test def aCustomStartpointAppliesThroughTheQuerysResolverForItsKind(): Unit = {
    val fromEnd = new CustomStartpointResolver {
      override val kind = "from-end"
      override def resolve(startpoints: Map[SSP, Custom], admin: SystemAdmin): Map[SSP, Long] = {
        val ends = admin.upcomingOffsets(startpoints.keySet)
        startpoints.map { case (ssp, c) => ssp -> (ends(ssp) - c.payload.toLong) }
      }
    }
    manager.write(orders0, Custom("from-end", "3", 1))
    val end = endOf(new StartpointStep(
      () => store,
      admin,
      Seq("orders", "rates"),
      "mem://store",
      Seq(fromEnd)
    )(
      BatchPlan(previous),
      PlanningContext()
    ))
    assertEquals(Map(t0 -> Map(orders0 -> 9L)), end.starts, "orders-0 ends at 12")
    assertEquals(
      Custom("from-end", "3", 1),
      end.state(AppliedStartpoints.Codec).applied((orders0, t0)).startpoint
    )
  }

  @Test def aCustomStartpointWithoutAResolverStopsTheStartNamingTheOption(): Unit = {
    manager.write(orders0, Custom("from-end", "3", 1))
    val m = assertThrows(
      classOf[StreamctlException],
      () => step()(BatchPlan(previous), PlanningContext())
    ).getMessage
    assertTrue(
      m.contains(
        "no resolver for custom startpoint kind 'from-end'; name a class resolving it in option " +
          "'startpoint.resolvers'"
      ),
      m
    )
    assertEquals(
      Some(Custom("from-end", "3", 1)),
      manager.read(orders0),
      "left in the store as written"
    )
  }
}
