package streamctl.dataloss

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.plan.{BatchPlan, PlanningContext, SourcePosition}
import streamctl.startpoint.FakeSystemAdmin
import streamctl.system.{SSP, SkippedRange, TaskName}

/** Recreated topics and retention gaps at batch planning, against a system held in memory. */
class DataLossChecksTest {
  private val p0 = TaskName("Partition 0")
  private val p1 = TaskName("Partition 1")
  private def orders(p: Int) = SSP.kafka("orders", p)
  private val rates = SSP.kafka("rates", 0)

  private val admin = new FakeSystemAdmin
  (0 to 1).foreach(p => admin.add(orders(p), 0, Seq.fill(800)(0L)))
  admin.add(rates, 0, Seq.fill(10)(0L))
  admin.ids ++= Map("orders" -> "id-1", "rates" -> "id-r")

  private def described = admin.describeStreams(Set("orders", "rates"))

  /** Both tasks read rates (a broadcast stream); each reads one partition of orders. */
  private def checkpoint(step: DataLossChecks, at: Long): SourcePosition =
    step.initialize(
      SourcePosition(Map(
        p0 -> Map(orders(0) -> at, rates -> 3L),
        p1 -> Map(orders(1) -> at, rates -> 5L)
      )),
      described
    )

  /** The error of the first planning after "orders" was recreated with `partitions` partitions. */
  private def recreatedFails(failOnDataLoss: Boolean, partitions: Int): String = {
    val step = new DataLossChecks(admin, failOnDataLoss)
    val start = checkpoint(step, 500)
    admin.recreate("orders", partitions, "id-2")
    assertThrows(
      classOf[StreamctlException],
      () => {
        step.recreations(
          BatchPlan(start),
          PlanningContext(Some(described), skippedWhileReading = Nil)
        );
        ()
      }
    ).getMessage
  }

  @Test def aRecreatedStreamFailsTheQueryNamingItAndBothIds(): Unit = {
    val message = recreatedFails(failOnDataLoss = true, partitions = 2)
    assertTrue(
      message.startsWith(
        "stream 'orders' was deleted and created again (Kafka topic ID id-1, now id-2)"
      ),
      message
    )
    assertTrue(message.contains("'failOnDataLoss'"), message)
  }

  @Test def withoutFailOnDataLossEveryTaskReadsTheNewTopicFromItsStart(): Unit = {
    val step = new DataLossChecks(admin, failOnDataLoss = false)
    val start = checkpoint(step, 500)
    admin.recreate("orders", 2, "id-2")
    (0 to 1).foreach(p => admin.add(orders(p), 0, Seq.fill(800)(0L)))
    val plan = step.recreations(
      BatchPlan(start),
      PlanningContext(Some(described), skippedWhileReading = Nil)
    )
    assertEquals(Map(orders(0) -> 0L, rates -> 3L), plan.begins(p0))
    assertEquals(Map(orders(1) -> 0L, rates -> 5L), plan.begins(p1))
    assertEquals(StreamIds(Map("orders" -> "id-2", "rates" -> "id-r")), plan.state(StreamIds.Codec))
    assertEquals(
      DataLoss(0, 1, Nil, Seq(Recreation("orders", "id-1", "id-2"))),
      plan.state(DataLoss.Codec)
    )
    /* The offset log says where the batch began, so a replay reads the new topic from its start
     * too. */
    val end = plan.end((_, _, b) => b + 1)
    assertEquals(Map(p0 -> Map(orders(0) -> 0L), p1 -> Map(orders(1) -> 0L)), end.starts)
    assertEquals(Map("recordsSkipped" -> "0", "streamsRecreated" -> "1"), step.metrics(end, Nil))

    // The next batch keeps the total and the new ID, and reports no recreation of its own.
    val next =
      step.recreations(BatchPlan(end), PlanningContext(Some(described), skippedWhileReading = Nil))
    assertEquals(DataLoss(0, 1, Nil, Nil), next.state(DataLoss.Codec))
  }

  @Test def aRecreatedStreamWithFewerPartitionsFails(): Unit = {
    val message = recreatedFails(failOnDataLoss = false, partitions = 1)
    assertTrue(message.contains("with 1 partition(s), fewer than the 2 the query reads"), message)
  }

  @Test def aCheckpointWithoutIdsRecordsThemWithoutComplaint(): Unit = {
    val step = new DataLossChecks(admin, failOnDataLoss = true)
    val legacy = SourcePosition(Map(p0 -> Map(orders(0) -> 500L)))
    assertEquals(StreamIds.empty, legacy.state(StreamIds.Codec))
    admin.recreate("orders", 2, "id-2")
    val plan = step.recreations(
      BatchPlan(legacy),
      PlanningContext(Some(described), skippedWhileReading = Nil)
    )
    assertEquals(Map("orders" -> "id-2", "rates" -> "id-r"), plan.state(StreamIds.Codec).ids)
    assertEquals(Map(p0 -> Map(orders(0) -> 500L)), plan.begins)
  }

  @Test def withoutACheckTheIdsAreCarriedAndNothingIsAsked(): Unit = {
    val step = new DataLossChecks(admin, failOnDataLoss = true)
    val start = checkpoint(step, 500)
    admin.recreate("orders", 2, "id-2")
    val before = admin.calls.toMap
    val plan = step.recreations(BatchPlan(start), PlanningContext(None, skippedWhileReading = Nil))
    assertEquals(start.state, plan.state)
    assertEquals(before, admin.calls.toMap)
  }

  @Test def gapsAreSkippedOnlyWithoutFailOnDataLoss(): Unit = {
    val strict = new DataLossChecks(admin, failOnDataLoss = true)
    val start = checkpoint(strict, 500)
    admin.add(orders(0), 600, Seq.fill(200)(0L)) // retention removed 0..599
    assertEquals(BatchPlan(start), strict.gaps(BatchPlan(start), PlanningContext()))
    assertEquals(
      0,
      admin.calls("oldestOffsets"),
      "the default costs no request: the reader fails on missing records"
    )

    val tolerant = new DataLossChecks(admin, failOnDataLoss = false)
    val plan = tolerant.gaps(
      tolerant.recreations(BatchPlan(start), PlanningContext(None, skippedWhileReading = Nil)),
      PlanningContext()
    )
    assertEquals(600L, plan.begins(p0)(orders(0)))
    assertEquals(500L, plan.begins(p1)(orders(1)))
    val end = plan.end((_, _, b) => b + 10)
    assertEquals(Map(p0 -> Map(orders(0) -> 600L)), end.starts)
    assertEquals(Set(p0 -> orders(0)), plan.skippedAhead, "the task reads on in the same stream")
    assertEquals(Nil, plan.restarted(end).toList)
    // Moved back by an earlier step (a startpoint) into the gap: read from elsewhere, not on.
    val rewound = tolerant.gaps(BatchPlan(start).begin(p0, orders(0), 100), PlanningContext())
    assertEquals(600L, rewound.begins(p0)(orders(0)))
    assertEquals(Set.empty, rewound.skippedAhead)
    assertEquals(List(orders(0)), rewound.restarted(rewound.end((_, _, b) => b)).toList)
    assertEquals(
      DataLoss(100, 0, Seq(SkippedRange(orders(0), 500, 600)), Nil, Map(orders(0) -> 100L)),
      end.state(DataLoss.Codec)
    )

    // The next batch carries the total, adds what its readers skipped, and has no range of its own.
    val read = Seq(SkippedRange(orders(1), 510, 515))
    val next = tolerant.gaps(
      tolerant.recreations(BatchPlan(end), PlanningContext(None, skippedWhileReading = read)),
      PlanningContext()
    )
    val bySsp = Map(orders(0) -> 100L, orders(1) -> 5L)
    assertEquals(DataLoss(105, 0, Nil, Nil, bySsp), next.state(DataLoss.Codec))
    assertEquals(
      Map(
        "recordsSkipped" -> "105",
        "recordsSkippedBySsp" -> """{"orders-0":100,"orders-1":5}""",
        "streamsRecreated" -> "0"
      ),
      tolerant.metrics(end, read)
    )
  }

  @Test def aQueryThatLostNothingCarriesNoLossState(): Unit = {
    val step = new DataLossChecks(admin, failOnDataLoss = false)
    val start = checkpoint(step, 500)
    val plan = step.gaps(
      step.recreations(
        BatchPlan(start),
        PlanningContext(Some(described), skippedWhileReading = Nil)
      ),
      PlanningContext()
    )
    assertEquals(start.state, plan.state)
    assertEquals(Map("recordsSkipped" -> "0", "streamsRecreated" -> "0"), step.metrics(start, Nil))
  }

  @Test def aStreamWithoutAnIdIsNotRecorded(): Unit = {
    admin.ids.clear()
    val first = new DataLossChecks(
      admin,
      failOnDataLoss = true
    ).initialize(SourcePosition(Map.empty), described)
    assertFalse(first.json.contains("streamIds"), first.json)
  }
}
