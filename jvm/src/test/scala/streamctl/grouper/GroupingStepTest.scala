package streamctl.grouper

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.metadata.InMemoryMetadataStore
import streamctl.plan.{BatchPlan, PlanningContext, SourcePosition, SourceState}
import streamctl.planner.SourceStates
import streamctl.startpoint.FakeSystemAdmin
import streamctl.system.{SSP, StreamCheck, Subscription, TaskName}

/** The grouping step of batch planning, against a system and a store held in memory. */
class GroupingStepTest {
  private val p0 = TaskName("Partition 0")
  private val p1 = TaskName("Partition 1")
  private def orders(p: Int) = SSP.kafka("orders", p)

  private val admin = new FakeSystemAdmin
  private val store = new InMemoryMetadataStore
  private var clock = 0L

  /** Partition `p` of `stream` holds offsets [oldest, oldest + records). */
  private def partition(stream: String, p: Int, records: Int, oldest: Long = 0L): Unit =
    admin.add(SSP.kafka(stream, p), oldest, Seq.fill(records)(0L))

  /** One run of a query: the step and the stream check the planner asks it with. */
  private final class Run(step: GroupingStep, check: StreamCheck) {
    def initial(): TaskMapping = step.initial(check.now())
    def initialOffset(m: TaskMapping, starts: Map[SSP, Long]): SourcePosition =
      step.initialPosition(m, starts)
    def plan(p: BatchPlan, target: Option[Map[SSP, Long]]): BatchPlan =
      step(p, PlanningContext(check.ifDue(), target))
    def admissible(p: BatchPlan, heads: Map[SSP, Long]): Map[SSP, Long] =
      p.copy(heads = heads).reachable(None)
  }

  private def step(options: (String, String)*)(streams: String*): Run =
    new Run(
      new GroupingStep(
        GrouperConfig.parse(options.toMap, streams).copy(checkIntervalMs = 1000),
        admin,
        store,
        "mapping-0"
      ),
      new StreamCheck(admin, Subscription.Topics(streams), 1000, () => clock)
    )

  private def stored: TaskMapping =
    TaskMapping.fromJson(store.get("grouper", "mapping-0").get, "test")

  /**
   * The end offset a batch planned from `plan` reaches when every SSP is read to its admissible
   * head.
   */
  private def readAll(s: Run, plan: BatchPlan): SourcePosition = {
    val heads = s.admissible(plan, admin.upcomingOffsets(plan.ssps))
    plan.end((_, ssp, begin) => math.max(begin, heads(ssp)))
  }

  @Test def firstRunGroupsStoresAndRecordsInitialCounts(): Unit = {
    partition("orders", 0, 5); partition("orders", 1, 5)
    val s = step()("orders")
    val first = s.initialOffset(s.initial(), Map(orders(0) -> 1L, orders(1) -> 2L))
    assertEquals(Map(p0 -> Map(orders(0) -> 1L), p1 -> Map(orders(1) -> 2L)), first.tasks)
    assertEquals(GroupingState(Map("orders" -> 2), Map.empty), first.state(GroupingState.Codec))
    assertEquals(Seq(p0, p1), stored.tasks)
  }

  @Test def storedMappingKeepsTaskNamesForAFreshCheckpoint(): Unit = {
    partition("orders", 0, 1); partition("orders", 1, 1)
    store.put(
      "grouper",
      "mapping-0",
      TaskMapping(
        Map("orders" -> 2),
        Map(TaskName("Left") -> Set(orders(0)), TaskName("Right") -> Set(orders(1)))
      ).toJson
    )
    assertEquals(Seq(TaskName("Left"), TaskName("Right")), step()("orders").initial().tasks)
  }

  @Test def growthJoinsOriginTasksFromTheFirstOffsetAndWaitsForOlderPartitions(): Unit = {
    partition("orders", 0, 10); partition("orders", 1, 10)
    val s = step()("orders")
    val start = s.initialOffset(s.initial(), Map(orders(0) -> 4L, orders(1) -> 10L))

    partition("orders", 2, 3, oldest = 0); partition("orders", 3, 3)
    clock += 1000
    val plan = s.plan(BatchPlan(start), None)
    assertEquals(Map(orders(0) -> 4L, orders(2) -> 0L), plan.begins(p0))
    assertEquals(Map(orders(1) -> 10L, orders(3) -> 0L), plan.begins(p1))
    assertEquals(Set(orders(0), orders(2)), stored.taskSsps(p0))
    /* orders-1 was already read to its head: orders-3 may go; orders-2 waits for orders-0 to reach
     * 10. */
    assertEquals(Map(orders(2) -> Map(orders(0) -> 10L)), plan.state(GroupingState.Codec).holds)
    val end = readAll(s, plan)
    assertEquals(Map(orders(0) -> 10L, orders(2) -> 0L), end.tasks(p0))
    assertEquals(Map(orders(1) -> 10L, orders(3) -> 3L), end.tasks(p1))
    assertEquals(Map(p0 -> Map(orders(2) -> 0L), p1 -> Map(orders(3) -> 0L)), end.starts)

    /* Next batch (no check due): orders-0 reached its barrier, so orders-2 is released and read
     * from 0. */
    val next = s.plan(BatchPlan(end), None)
    assertEquals(Map.empty, next.state(GroupingState.Codec).holds)
    assertEquals(Map(orders(0) -> 10L, orders(2) -> 3L), readAll(s, next).tasks(p0))
  }

  @Test def growthIsSeenAfterChecksThatFoundThePartitionsRead(): Unit = {
    partition("orders", 0, 4); partition("orders", 1, 4)
    val s = step()("orders")
    var end = s.initialOffset(s.initial(), Map(orders(0) -> 0L, orders(1) -> 0L))
    // Every batch outlasts the check interval: each planning gets the streams described.
    for (_ <- 1 to 3) {
      clock += 1000
      val plan = s.plan(BatchPlan(end), None)
      assertEquals(Set(orders(0), orders(1)), plan.ssps)
      end = readAll(s, plan)
    }
    partition("orders", 2, 3); partition("orders", 3, 3)
    clock += 1000
    val grown = s.plan(BatchPlan(end), None)
    assertEquals(Map(orders(0) -> 4L, orders(2) -> 0L), grown.begins(p0))
    assertEquals(Map(orders(1) -> 4L, orders(3) -> 0L), grown.begins(p1))
    assertEquals(Set(orders(0), orders(2)), stored.taskSsps(p0))
  }

  @Test def countsAreAskedAtMostEveryCheckInterval(): Unit = {
    partition("orders", 0, 1)
    val s = step()("orders")
    val start = s.initialOffset(s.initial(), Map(orders(0) -> 0L))
    val asked = admin.calls("partitionCounts")
    partition("orders", 1, 1)
    clock += 999
    assertEquals(Set(orders(0)), s.plan(BatchPlan(start), None).ssps)
    assertEquals(asked, admin.calls("partitionCounts"))
    clock += 1
    assertEquals(Set(orders(0), orders(1)), s.plan(BatchPlan(start), None).ssps)
    assertEquals(asked + 1, admin.calls("partitionCounts"))
  }

  @Test def restartChecksAtOnceAndRepairsTheStore(): Unit = {
    partition("orders", 0, 2); partition("orders", 1, 2)
    val first = step()("orders")
    val start = first.initialOffset(first.initial(), Map(orders(0) -> 2L, orders(1) -> 2L))
    store.delete("grouper", "mapping-0")
    partition("orders", 2, 1); partition("orders", 3, 1)
    val plan = step()("orders").plan(BatchPlan(start), None) // a new run: no clock movement needed
    assertEquals(Set(orders(0), orders(2)), plan.begins(p0).keySet)
    assertEquals(Set(orders(0), orders(2)), stored.taskSsps(p0))
    assertEquals(
      Map.empty,
      plan.state(GroupingState.Codec).holds
    ) // old partitions were already at their heads
  }

  @Test def anAvailableNowRunsTargetDoesNotCapTheBarrier(): Unit = {
    partition("orders", 0, 10); partition("orders", 1, 10)
    val s = step()("orders")
    // The run's target is 6 on orders-0; records 6..9 were written before the growth too.
    val start = s.initialOffset(s.initial(), Map(orders(0) -> 6L, orders(1) -> 10L))
    partition("orders", 2, 1); partition("orders", 3, 1)
    clock += 1000
    val run1 = s.plan(BatchPlan(start), Some(Map(orders(0) -> 6L, orders(1) -> 10L)))
    assertEquals(Map(orders(2) -> Map(orders(0) -> 10L)), run1.state(GroupingState.Codec).holds)
    // The next run still holds orders-2 until orders-0 passed them.
    val run2 = step()("orders").plan(BatchPlan(run1.end((_, _, b) => b)), None)
    assertTrue(run2.held.contains(orders(2)), run2.held.toString)
  }

  @Test def shrinkAndNonMultipleGrowthFailNamingTheStream(): Unit = {
    partition("orders", 0, 1); partition("orders", 1, 1)
    val s = step()("orders")
    val twoParts = s.initialOffset(s.initial(), Map(orders(0) -> 0L, orders(1) -> 0L))
    partition("orders", 2, 1)
    clock += 1000
    val e =
      assertThrows(classOf[StreamctlException], () => { s.plan(BatchPlan(twoParts), None); () })
    assertTrue(e.getMessage.contains("'orders' grew from 2 to 3"), e.getMessage)

    val wider = SourcePosition(
      (0 until 4).map(p => TaskName(s"Partition ${p % 2}") -> orders(p)).groupMap(_._1)(_._2)
        .map { case (t, ss) => t -> ss.map(_ -> 0L).toMap },
      twoParts.state
    )
    val shrink = assertThrows(
      classOf[StreamctlException],
      () => { step()("orders").plan(BatchPlan(wider), None); () }
    )
    assertTrue(shrink.getMessage.contains("'orders' shrank from 4 to 3"), shrink.getMessage)
  }

  @Test def broadcastPartitionsReachEveryTaskWithoutHold(): Unit = {
    partition("orders", 0, 1); partition("orders", 1, 1); partition("rates", 0, 5)
    val s = step("stream.rates.broadcast" -> "true")("orders", "rates")
    val start = s.initialOffset(
      s.initial(),
      Map(orders(0) -> 0L, orders(1) -> 0L, SSP.kafka("rates", 0) -> 5L)
    )
    partition("rates", 1, 2)
    clock += 1000
    val plan = s.plan(BatchPlan(start), None)
    for (t <- Seq(p0, p1)) assertEquals(Some(0L), plan.begins(t).get(SSP.kafka("rates", 1)))
    assertEquals(Map.empty, plan.state(GroupingState.Codec).holds)
  }

  @Test def offsetWithoutGroupingStateTakesItsOwnCountsAsInitial(): Unit = {
    partition("orders", 0, 1); partition("orders", 1, 1); partition("orders", 2, 1);
    partition("orders", 3, 1)
    val legacy = SourcePosition(Map(p0 -> Map(orders(0) -> 1L), p1 -> Map(orders(1) -> 1L)))
    val plan = step()("orders").plan(BatchPlan(legacy), None)
    assertEquals(GroupingState(Map("orders" -> 2), Map.empty), plan.state(GroupingState.Codec))
    assertEquals(Set(orders(1), orders(3)), plan.begins(p1).keySet)
  }

  @Test def planningTwiceFromOneOffsetGivesTheSameBatch(): Unit = {
    partition("orders", 0, 10); partition("orders", 1, 10)
    val s = step()("orders")
    val start = s.initialOffset(s.initial(), Map(orders(0) -> 0L, orders(1) -> 0L))
    partition("orders", 2, 3); partition("orders", 3, 3)
    val a = readAll(step()("orders"), step()("orders").plan(BatchPlan(start), None))
    val b = readAll(step()("orders"), step()("orders").plan(BatchPlan(start), None))
    assertEquals(a.json, b.json)
    assertEquals(a, SourceStates.parse(a.json))
  }

  @Test def damagedGroupingStateIsRefusedNamingWhatIsWrong(): Unit = {
    // Each of these read as "no counts" or "no hold" before: a hold dropped lets a grown
    // partition's records through before its older partitions' (docs/grouping.md).
    for (
      (json, says) <- Seq(
        """{"initialPartitionCounts":5}""" -> "field 'initialPartitionCounts' is not a JSON object",
        """{"initialPartitionCounts":{"orders":2},"holds":[]}""" -> "holds is not a JSON object",
        """{"initialPartitionCounts":{"orders":2},"holds":{"kafka/orders/2":7}}""" ->
          "holds.'kafka/orders/2' is not a JSON object",
        """{"initialPartitionCounts":{"orders":2},"holds":{"kafka/orders/2":{"kafka/orders/0":1.5}}}""" ->
          "holds.'kafka/orders/2'.'kafka/orders/0' is not an offset",
        """{"initialPartitionCounts":{"orders":2},"holds":{"orders-2":{"kafka/orders/0":1}}}""" ->
          "holds: Not an SSP key: 'orders-2'"
      )
    ) {
      val e = assertThrows(
        classOf[StreamctlException],
        () => GroupingState.Codec.read(streamctl.Json.parse(json, "test"), "offset log batch 7")
      )
      assertTrue(
        e.getMessage.contains("offset log batch 7") && e.getMessage.contains(says),
        e.getMessage
      )
    }
  }

  @Test def stateRoundTripsThroughTheOffsetJson(): Unit = {
    val st = GroupingState(Map("orders" -> 2, "a.b" -> 1), Map(orders(2) -> Map(orders(0) -> 7L)))
    val o = SourcePosition(
      Map(p0 -> Map(orders(0) -> 1L)),
      SourceState.empty.updated(GroupingState.Codec, st)
    )
    assertEquals(st, SourceStates.parse(o.json).state(GroupingState.Codec))
  }
}
