package streamctl.planner

import scala.collection.mutable

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.chooser.ChooserState
import streamctl.control.{
  ControlState,
  ControlResults,
  SspControlState,
  ControlledQuery,
  EndOfStreamMessage,
  RunControl
}
import streamctl.grouper.GroupingState
import streamctl.locality.ExecutorId
import streamctl.metadata.{InMemoryMetadataStore, StoreLayout}
import streamctl.plan.{ReaderReports, ReaderRun, SourcePosition}
import streamctl.startpoint.{
  AppliedStartpoints,
  FakeSystemAdmin,
  Startpoint,
  StartpointKey,
  StartpointManager
}
import streamctl.system.{SSP, SkippedRange, TaskName}

/**
 * Batch planning as Spark drives it (initial offset, then latestOffset / planInputPartitions /
 * commit per batch), over a system and a metadata store held in memory: no broker, no Spark.
 */
class PlannerTest {
  private val admin = new FakeSystemAdmin

  /** Listings per namespace: the store a real query uses lists a directory for each. */
  private val listings = mutable.Map.empty[String, Int].withDefaultValue(0)
  // Runs once as the planning lists the stored startpoints (then is reset).
  private var onStartpointListing: () => Unit = () => ()
  private val store = new InMemoryMetadataStore {
    override def keys(namespace: String): Seq[String] = {
      listings(namespace) += 1
      if (namespace == StoreLayout.StartpointsNamespace) {
        val hook = onStartpointListing
        onStartpointListing = () => ()
        hook()
      }
      super.keys(namespace)
    }
  }
  private val sourceCheckpoint = new InMemoryMetadataStore
  private val keys = StoreLayout.Source("0")
  private var clock = 0L
  private val p0 = TaskName("Partition 0")
  private val p1 = TaskName("Partition 1")
  private def orders(p: Int) = SSP.kafka("orders", p)
  private def backfill(p: Int) = SSP.kafka("backfill", p)
  private val mid = SSP.kafka("mid", 0)

  private object reports extends ReaderReports {
    override def runs: Seq[ReaderRun] = Nil
    override def skipped: Seq[SkippedRange] = Nil
    override def recordTimes: Map[SSP, Long] = Map.empty
    override def clear(): Unit = ()
  }

  /** Appends `n` records (timestamps 0, 1, ...) to the partition. */
  private def write(ssp: SSP, n: Int): Unit = {
    val before = admin.upcomingOffsets(Set(ssp)).getOrElse(ssp, 0L).toInt
    admin.add(ssp, 0, (0 until before + n).map(_.toLong))
  }

  /** A run of a query: Spark builds a new source, hence a new planner, at every start. */
  private def planner(streams: String, options: (String, String)*): Planner =
    controlledPlanner(streams, None, options: _*)

  private def controlledPlanner(
      streams: String,
      query: Option[ControlledQuery],
      options: (String, String)*
  ): Planner = timedPlanner(streams, query, Map.empty, options: _*)

  /** A run whose metrics carry seconds behind, told what the earlier run processed. */
  private def timedPlanner(
      streams: String,
      query: Option[ControlledQuery],
      processedBefore: Map[SSP, Long],
      options: (String, String)*
  ): Planner =
    new Planner(
      SourceOptions(Map(
        "kafka.bootstrap.servers" -> "127.0.0.1:1",
        "streams" -> streams,
        "starting.offsets" -> "earliest",
        "partition.check.interval" -> "1s"
      ) ++ options),
      admin,
      store,
      "mem://store",
      keys,
      new InitialOffset(() => sourceCheckpoint),
      () => Seq(ExecutorId("1", "h1"), ExecutorId("2", "h2")),
      reports,
      query = query,
      secondsBehind = processedBefore.nonEmpty,
      clockMs = () => clock,
      // Stream checks asked ahead run at once, in order with the test's own steps.
      background = (r: Runnable) => r.run(),
      processedBefore = () => processedBefore
    )

  /** A run's control as `spark.QueryControl` makes it, for a query with no event-time watermark. */
  private def runControl(): RunControl = new RunControl(
    "q-1",
    new RunControl.Query {
      override def name: Option[String] = None
      override def eventTimeWatermark(running: Option[Long]): Option[Option[Long]] = None
      override def failed: Boolean = false
      override def running: Boolean = true
    },
    () => ()
  )

  /** Plans and "runs" the next batch: Spark logs `end`, runs the reads and commits. */
  private def batch(
      planner: Planner,
      start: SourcePosition,
      budget: Option[Long] = None
  ): (SourcePosition, Seq[TaskRead]) = {
    val end = planner.latestOffset(start, budget)
    val reads = planner.planReads(start, end)
    planner.commit(end)
    (end, reads)
  }

  private def ranges(reads: Seq[TaskRead]): Map[(String, SSP), (Long, Long)] =
    reads.flatMap(r => r.ranges.map(x => (r.task.name, x.ssp) -> (x.from, x.until))).toMap

  @Test def theBudgetIsSharedAndAGrownStreamJoinsItsTasksAfterTheOlderPartitions(): Unit = {
    write(orders(0), 10); write(orders(1), 10)
    val q = planner("orders")
    val start = q.initialPosition()
    assertEquals(Map(p0 -> Map(orders(0) -> 0L), p1 -> Map(orders(1) -> 0L)), start.tasks)

    val (b1, r1) = batch(q, start, budget = Some(8))
    assertEquals(
      Map((p0.name, orders(0)) -> (0L, 4L), (p1.name, orders(1)) -> (0L, 4L)),
      ranges(r1),
      "fair share of 8"
    )

    // The stream doubles; the next check (after partition.check.interval) sees it.
    write(orders(2), 3); write(orders(3), 3)
    clock += 1000
    val (b2, r2) = batch(q, b1, budget = Some(100))
    assertEquals(
      Map(
        p0 -> Map(orders(0) -> 10L, orders(2) -> 0L),
        p1 -> Map(orders(1) -> 10L, orders(3) -> 0L)
      ),
      b2.tasks,
      "new partitions join the tasks of their origin and wait until the older ones passed the growth"
    )
    assertEquals(Map(p0 -> Map(orders(2) -> 0L), p1 -> Map(orders(3) -> 0L)), b2.starts)
    assertEquals(Set(orders(2), orders(3)), b2.state(GroupingState.Codec).holds.keySet)
    assertEquals(
      Map((p0.name, orders(0)) -> (4L, 10L), (p1.name, orders(1)) -> (4L, 10L)),
      ranges(r2)
    )

    val (b3, r3) = batch(q, b2, budget = Some(100))
    assertEquals(
      Map((p0.name, orders(2)) -> (0L, 3L), (p1.name, orders(3)) -> (0L, 3L)),
      ranges(r3)
    )
    assertTrue(b3.state(GroupingState.Codec).holds.isEmpty)
    assertSame(b3, q.latestOffset(b3, Some(100)), "nothing new: no batch")
  }

  @Test def aBatchSparkPlansTwiceIsPlannedOnceAndAReplayFromTheLogAgain(): Unit = {
    write(orders(0), 10); write(orders(1), 10)
    val q = planner("orders")
    val start = q.initialPosition()
    val end = q.latestOffset(start, Some(8))
    val reads = q.planReads(start, end)
    assertSame(reads, q.planReads(start, end), "Spark's second physical plan of the batch")
    // A batch replayed after a crash comes back from the offset log as new positions.
    val logged = SourceStates.parse(end.json)
    val replayed = q.planReads(SourceStates.parse(start.json), logged)
    assertNotSame(reads, replayed)
    assertEquals(ranges(reads), ranges(replayed))
  }

  @Test def priorityTiersTakeTheBudgetFirst(): Unit = {
    write(orders(0), 10); write(backfill(0), 10)
    val q = planner("orders,backfill", "stream.orders.priority" -> "1")
    val (b1, r1) = batch(q, q.initialPosition(), budget = Some(6))
    assertEquals(Map((p0.name, orders(0)) -> (0L, 6L)), ranges(r1))
    val (_, r2) = batch(q, b1, budget = Some(6))
    assertEquals(
      Map((p0.name, orders(0)) -> (6L, 10L), (p0.name, backfill(0)) -> (0L, 2L)),
      ranges(r2)
    )
  }

  @Test def aStartpointAppliesAtTheNextRunAndIsDeletedOnceItsBatchCommitted(): Unit = {
    write(orders(0), 10); write(orders(1), 10)
    val first = planner("orders")
    val (b1, _) = batch(first, first.initialPosition())

    new StartpointManager(store).write(orders(0), Startpoint.specific(2)) // the query is stopped
    val restarted = planner("orders")
    val b2 = restarted.latestOffset(b1, None)
    assertEquals(Map(p0 -> Map(orders(0) -> 2L)), b2.starts)
    assertEquals(Set((orders(0), p0)), b2.state(AppliedStartpoints.Codec).applied.keySet)
    assertEquals(Map((p0.name, orders(0)) -> (2L, 10L)), ranges(restarted.planReads(b1, b2)))
    val fannedOut = StartpointKey(orders(0), p0).storeKey
    assertEquals(
      Seq(fannedOut),
      store.keys(StoreLayout.StartpointsNamespace),
      "fanned out to the task, not deleted yet"
    )

    restarted.commit(b2)
    assertEquals(Nil, store.keys(StoreLayout.StartpointsNamespace))
    write(orders(0), 1)
    val b3 = restarted.latestOffset(b2, None)
    assertTrue(b3.starts.isEmpty && b3.state(AppliedStartpoints.Codec).isEmpty, "applied once")
  }

  @Test def anAvailableNowRunPlansToItsTargetWithoutAskingTheHeadsAgainUnlessAStartpointPassedIt()
      : Unit = {
    write(orders(0), 10); write(orders(1), 10)
    val first = planner("orders")
    val (b1, _) = batch(first, first.initialPosition(), budget = Some(4))

    new StartpointManager(store).write(orders(0), Startpoint.specific(12)) // the query is stopped
    val run = planner("orders")
    run.prepareForTriggerAvailableNow() // the target: 10 and 10
    write(orders(0), 5); write(orders(1), 5) // after the run started: not for this run
    val (b2, _) = batch(run, b1, budget = Some(4))
    assertEquals(
      Map(orders(0) -> 12L, orders(1) -> 6L),
      b2.minPositions,
      "orders(0) begins past the target: it reads nothing and does not go back to the target"
    )
    admin.requests.clear()
    val (b3, _) = batch(run, b2, budget = Some(4))
    val b4 = run.latestOffset(b3, Some(4))
    assertEquals(Map(orders(0) -> 12L, orders(1) -> 10L), b3.minPositions)
    assertTrue(b4 eq b3, "no batch past the target")
    assertEquals(Nil, admin.requests.toSeq.filter(_ == "upcomingOffsets"), "no heads asked")
  }

  @Test def secondsBehindIsKnownFromARestartsFirstBatchUnlessAStartpointMovedThePartition()
      : Unit = {
    // Records 20 s apart; the earlier run processed orders(0) up to 20 s and orders(1) up to 40 s.
    admin.add(orders(0), 0, (0 until 10).map(_ * 20000L))
    admin.add(orders(1), 0, (0 until 10).map(_ * 20000L))
    val first = planner("orders")
    val (b1, _) = batch(first, first.initialPosition(), budget = Some(4))
    new StartpointManager(store).write(orders(1), Startpoint.specific(1)) // the query is stopped

    // This run's readers report no record time (the test's reports are empty): what is known comes
    // from the earlier run.
    val restarted =
      timedPlanner("orders", None, Map(orders(0) -> 20000L, orders(1) -> 40000L))
    val (b2, _) = batch(restarted, b1, budget = Some(2))
    assertEquals(Map(p1 -> Map(orders(1) -> 1L)), b2.starts)
    val metrics = restarted.metrics(Some(b2))
    assertEquals(
      """{"orders-0":160}""",
      metrics("secondsBehind"),
      "the newest record (180 s) minus the earlier run's last (20 s), in seconds; orders(1) moved"
    )
  }

  @Test def newestRecordTimesAreAskedAtMostEveryFewSecondsOrWhenAnotherSspFallsBehind(): Unit = {
    admin.add(orders(0), 0, (0 until 10).map(_ * 1000L))
    admin.add(orders(1), 0, Seq(0L))
    val q = timedPlanner("orders", None, Map(orders(0) -> 0L, orders(1) -> 0L))
    def secondsBehind(end: SourcePosition): String = q.metrics(Some(end))("secondsBehind")

    val (b1, _) = batch(q, q.initialPosition(), budget = Some(3))
    assertEquals(Seq(Set(orders(0))), admin.newestAsked.toSeq, "only orders-0 is left behind")
    assertEquals("""{"orders-0":9,"orders-1":0}""", secondsBehind(b1))

    // Records arrive later in time, but the answer is younger than the refresh: taken again.
    admin.add(orders(0), 0, (0 until 12).map(_ * 1000L))
    clock += Planner.NewestRefreshMs - 1
    val (b2, _) = batch(q, b1, budget = Some(1))
    assertEquals(1, admin.newestAsked.size)
    assertEquals("""{"orders-0":9,"orders-1":0}""", secondsBehind(b2))

    // orders-1 falls behind: asked at once, for both.
    admin.add(orders(1), 0, Seq(0L, 4000L, 5000L, 6000L))
    val (b3, _) = batch(q, b2, budget = Some(2))
    assertEquals(Set(orders(0), orders(1)), admin.newestAsked.last)
    assertEquals("""{"orders-0":11,"orders-1":6}""", secondsBehind(b3))

    // The refresh passed: asked again.
    clock += Planner.NewestRefreshMs
    batch(q, b3, budget = Some(2))
    assertEquals(3, admin.newestAsked.size)
  }

  @Test def theReadersControlResultsAreMergedIntoTheNextOffset(): Unit = {
    write(mid, 10)
    val q = planner("mid", "stream.mid.intermediate" -> "true")
    val start = q.initialPosition()
    val (b1, r1) = batch(q, start)
    assertEquals(Some(1L), b1.state.get(ControlState.Codec).map(_.seq))
    val control = r1.head.control.get
    assertEquals(1L, control.seq)

    // The task's reader heard the only producer end the stream, and reported it for batch 1:
    // the driver writes it to the store as the batch's one value.
    val ended = SspControlState.empty(EndOfStreamMessage("p0", 1), mid, 9).state
    q.controlResults.reported(control.seq, r1.head.task, Some(Map(mid -> ended)))
    assertEquals(
      Seq(r1.head.task.name -> Map(mid -> ended)),
      new ControlResults(store, keys.controlNamespace).load(control.seq)
    )
    assertEquals("true", q.metrics(Some(b1))("endOfStream"))

    write(mid, 1)
    val (b2, r2) = batch(q, b1)
    assertEquals(
      Some(SspControlState.empty(EndOfStreamMessage("p0", 1), mid, 9).state),
      b2.state.get(ControlState.Codec).flatMap(_.states.get(mid))
    )
    assertEquals(2L, r2.head.control.get.seq)
    assertTrue(
      new ControlResults(store, keys.controlNamespace).load(1).isEmpty,
      "merged into the log, then deleted"
    )
  }

  @Test def atEndOfStreamThePlanningAsksForPartitionsAddedSinceTheLastCheck(): Unit = {
    val m = (p: Int) => SSP.kafka("mid", p)
    val q = planner("mid", "stream.mid.intermediate" -> "true")
    // Each reader of a batch heard the only producer end its SSP.
    def ended(start: SourcePosition, end: SourcePosition): Unit = {
      q.planReads(start, end).foreach { r =>
        val ssp = r.ranges.head.ssp
        val state =
          SspControlState.empty(EndOfStreamMessage("p0", 1), ssp, r.ranges.head.until - 1).state
        q.controlResults.reported(r.control.get.seq, r.task, Some(Map(ssp -> state)))
      }
      q.commit(end)
    }
    write(m(0), 10); write(m(1), 10)
    val start = q.initialPosition()
    val b1 = q.latestOffset(start, None)
    ended(start, b1)
    assertEquals("true", q.metrics(Some(b1))("endOfStream"))
    // The upstream grew the stream, wrote to the new partitions and ended them too, all before the
    // next check is due (partition.check.interval is 1 s; the clock has not moved).
    write(m(2), 5); write(m(3), 5)
    admin.requests.clear()
    val b2 = q.latestOffset(b1, None)
    assertEquals(Seq("partitionCounts"), admin.requests.filter(_ == "partitionCounts").toSeq)
    assertEquals((0 to 3).map(m).toSet, b2.ssps, "not at the end: two partitions are unread")
    ended(b1, b2)
    assertEquals("true", q.metrics(Some(b2))("endOfStream"))
    // Asked once for these partitions: a query resting at its end does not ask at every trigger.
    admin.requests.clear()
    val b3 = q.latestOffset(b2, None) // carries the batch's results into the log
    q.commit(b3)
    assertEquals(Seq("partitionCounts"), admin.requests.filter(_ == "partitionCounts").toSeq)
    admin.requests.clear()
    assertEquals(b3, q.latestOffset(b3, None))
    assertEquals(b3, q.latestOffset(b3, None))
    assertEquals(Seq.empty, admin.requests.filter(_ == "partitionCounts").toSeq)
  }

  /** A planner of its own store reading option `subscribePattern` `pattern`. */
  private def patternPlanner(pattern: String, options: (String, String)*): Planner = new Planner(
    SourceOptions(Map(
      "kafka.bootstrap.servers" -> "127.0.0.1:1",
      "subscribePattern" -> pattern,
      "starting.offsets" -> "earliest",
      "partition.check.interval" -> "1s"
    ) ++ options),
    admin,
    new InMemoryMetadataStore,
    "mem://store",
    keys,
    new InitialOffset(() => new InMemoryMetadataStore),
    () => Seq(ExecutorId("1", "h1")),
    reports,
    query = None,
    secondsBehind = false,
    clockMs = () => clock,
    background = (r: Runnable) => r.run(),
    processedBefore = () => Map.empty
  )

  @Test def aStreamOfAPatternDeletedWhileReadIsDataLoss(): Unit = {
    val (a, b) = (SSP.kafka("orders", 0), SSP.kafka("ordersb", 0))
    write(a, 10); write(b, 10)
    admin.ids("ordersb") = "id-1"
    def run(options: (String, String)*) = {
      val q = patternPlanner("ord.*", options: _*)
      val b1 = q.latestOffset(q.initialPosition(), Some(2))
      assertEquals(Set(a, b), b1.ssps)
      (q, b1)
    }
    val (failing, f1) = run()
    val (going, g1) = run("failOnDataLoss" -> "false")
    admin.delete("ordersb") // with 9 records unread
    clock += 1000
    val e = assertThrows(
      classOf[streamctl.StreamctlException],
      () => { failing.latestOffset(f1, Some(2)); () }
    )
    assertTrue(
      e.getMessage.contains("Stream 'ordersb' was deleted") && e.getMessage.contains(
        "failOnDataLoss"
      ),
      e.getMessage
    )
    val g2 = going.latestOffset(g1, Some(2))
    assertEquals(Set(a), g2.ssps)
    assertFalse(
      g2.state(streamctl.dataloss.StreamIds.Codec).ids.contains("ordersb"),
      "a topic created again under the name is a new stream"
    )
  }

  @Test def aStreamOfAPatternDeletedBetweenChecksIsDataLossToo(): Unit = {
    val (a, b) = (SSP.kafka("orders", 0), SSP.kafka("ordersb", 0))
    write(a, 10); write(b, 10)
    admin.refusesUnknown = true
    val q = patternPlanner("ord.*", "failOnDataLoss" -> "false")
    val b1 = q.latestOffset(q.initialPosition(), Some(2))
    assertEquals(Set(a, b), b1.ssps)
    admin.delete("ordersb") // no check is due: Kafka refuses the deleted topic's offsets
    val b2 = q.latestOffset(b1, Some(2))
    assertEquals(Set(a), b2.ssps)
  }

  @Test def aReplayAfterARestartPlansTheSameBatch(): Unit = {
    write(orders(0), 10); write(orders(1), 10)
    val q = planner("orders", "max.records.per.batch" -> "5")
    val start = q.initialPosition()
    val end = q.latestOffset(start, Some(5))
    val reads = q.planReads(start, end)

    /* Crash before the commit: the new run reads the first offset back, and the logged end plans
     * the same reads. */
    val again = planner("orders", "max.records.per.batch" -> "5")
    assertEquals(start, again.initialPosition(), "batch 0 replays from the stored first offset")
    val replayed = again.planReads(start, end)
    assertEquals(ranges(reads), ranges(replayed))
    assertEquals(
      reads.map(_.locations.toSeq),
      replayed.map(_.locations.toSeq),
      "tasks keep their executors"
    )
    assertEquals(
      end,
      again.latestOffset(start, Some(5)),
      "and planning it again gives the same batch"
    )
    assertEquals(5L, reads.flatMap(_.ranges).map(_.size).sum, "within the budget")
  }

  @Test def aRealTimeBatchReadsOpenEndedFromItsBeginningsAndEndsWhereItsReadersStopped(): Unit = {
    write(orders(0), 10); write(orders(1), 10)
    val q = planner("orders")
    val start = q.initialPosition()
    val b1 = q.beginRealTime(start)
    assertEquals(
      Map((p0.name, orders(0)) -> (0L, Long.MaxValue), (p1.name, orders(1)) -> (0L, Long.MaxValue)),
      ranges(b1.reads)
    )
    // Task 1 was never scheduled (Spark reports no offset for it): it ends where it began.
    val end1 = q.endRealTime(b1, Map(p0 -> ReaderEnd(Map(orders(0) -> 7L), None)))
    assertEquals(Map(p0 -> Map(orders(0) -> 7L), p1 -> Map(orders(1) -> 0L)), end1.tasks)
    q.commit(end1)

    /* A batch that read nothing ends exactly where it began (Spark's processAllAvailable waits for
     * that). */
    val b2 = q.beginRealTime(end1)
    assertSame(
      end1,
      q.endRealTime(
        b2,
        Map(
          p0 -> ReaderEnd(Map(orders(0) -> 7L), None),
          p1 -> ReaderEnd(Map(orders(1) -> 0L), None)
        )
      )
    )

    // A startpoint waits for the next run, and is then part of the batch's beginnings and end.
    new StartpointManager(store).write(orders(1), Startpoint.specific(4))
    assertEquals(
      (0L, Long.MaxValue),
      ranges(q.beginRealTime(end1).reads)((p1.name, orders(1))),
      "not in this run"
    )
    val restarted = planner("orders")
    val b3 = restarted.beginRealTime(end1)
    assertEquals((4L, Long.MaxValue), ranges(b3.reads)((p1.name, orders(1))))
    val end3 = restarted.endRealTime(b3, Map(p1 -> ReaderEnd(Map(orders(1) -> 6L), None)))
    assertEquals(
      Map(p1 -> Map(orders(1) -> 4L)),
      end3.starts,
      "a replay begins where this batch began"
    )
    assertEquals(Map(p0 -> Map(orders(0) -> 7L), p1 -> Map(orders(1) -> 6L)), end3.tasks)
  }

  @Test def aRealTimeEndCarriesTheReadersControlStatesAndNothingIsReadPastEndOfStream(): Unit = {
    write(mid, 10)
    val q = planner("mid", "stream.mid.intermediate" -> "true")
    val start = q.initialPosition()
    val b1 = q.beginRealTime(start)
    assertEquals(1L, b1.reads.head.control.get.seq)
    val ended = SspControlState.empty(EndOfStreamMessage("p0", 1), mid, 9).state
    val end1 = q.endRealTime(b1, Map(p0 -> ReaderEnd(Map(mid -> 10L), Some(Map(mid -> ended)))))
    assertEquals(Some(ControlState(1L, Map(mid -> ended))), end1.state.get(ControlState.Codec))
    q.commit(end1)
    /* A run that died in batch 2 left results the offset log does not hold: the next run does not
     * merge them. */
    new ControlResults(
      store,
      keys.controlNamespace
    ).put(2, p0, Map(mid -> SspControlState.empty(EndOfStreamMessage("p0", 1), mid, 3).state))

    val restarted = planner("mid", "stream.mid.intermediate" -> "true")
    val b2 = restarted.beginRealTime(end1)
    assertEquals(
      Some(ended),
      b2.reads.head.control.map(_.startStates(mid)),
      "the next batch starts from them"
    )
    assertTrue(
      new ControlResults(store, keys.controlNamespace).load(2).isEmpty,
      "the dead run's results are gone"
    )
    assertSame(
      end1,
      restarted.endRealTime(b2, Map(p0 -> ReaderEnd(Map(mid -> 10L), Some(Map(mid -> ended)))))
    )
  }

  @Test def whatAFailedRealTimeAttemptRecordedIsNotTakenForItsRetrys(): Unit = {
    write(mid, 10)
    val q = planner("mid", "stream.mid.intermediate" -> "true")
    val b1 = q.beginRealTime(q.initialPosition())
    // The first attempt read to end-of-stream, recorded it and was lost with its executor; the
    // retry began again at 0 and, when the batch ended, was at 3.
    val ended = SspControlState.empty(EndOfStreamMessage("p0", 1), mid, 9).state
    new ControlResults(store, keys.controlNamespace).put(1, p0, Map(mid -> ended))
    val end1 = q.endRealTime(b1, Map(p0 -> ReaderEnd(Map(mid -> 3L), Some(Map.empty))))
    q.commit(end1)
    val b2 = q.beginRealTime(end1)
    assertFalse(
      b2.reads.head.control.get.startStates.get(mid).exists(_.isEndOfStream),
      "the retry at offset 3 has not met end-of-stream"
    )
  }

  @Test def aCheckDueByTheNextPlanningIsAskedAsAMicroBatchCommitsAndThatPlanningTakesIt(): Unit = {
    write(orders(0), 10); write(orders(1), 10)
    val mb = planner("orders")
    val e1 = mb.latestOffset(mb.initialPosition(), Some(4)) // the first planning checks at once
    clock += 600
    val e2 = mb.latestOffset(e1, Some(4)) // not due yet (partition.check.interval is 1 s)
    write(orders(2), 3); write(orders(3), 3)
    admin.requests.clear()
    // Spark commits batch 1 right after planning batch 2; the check is due by the next planning.
    mb.commit(e1)
    assertEquals(Seq("partitionCounts"), admin.requests.toSeq, "asked as the batch committed")
    clock += 600
    val e3 = mb.latestOffset(e2, Some(4))
    assertEquals(
      Seq("partitionCounts"),
      admin.requests.filter(_ == "partitionCounts").toSeq,
      "the planning takes that answer"
    )
    assertEquals((0 to 3).map(orders).toSet, e3.ssps, "with the growth it saw")
  }

  @Test def eachBoundaryAsksTheHeadsBeforeDescribingTheStreamsSoBothRequestsTravelTogether()
      : Unit = {
    write(orders(0), 10); write(orders(1), 10)
    val rt = planner("orders")
    var end = rt.initialPosition()
    for (_ <- 1 to 2) {
      clock += 2000 // real-time batches outlast partition.check.interval: every boundary checks the streams
      admin.requests.clear()
      val b = rt.beginRealTime(end)
      end = rt.endRealTime(b, Map(p0 -> ReaderEnd(Map(orders(0) -> 10L), None)))
      rt.commit(end)
      assertEquals(
        Seq("upcomingOffsets", "partitionCounts"),
        admin.requests.toSeq,
        "two requests, in flight together"
      )
    }
    // A micro-batch's first planning too (later ones take the check asked ahead as the batch
    // before commits).
    val mb = planner("orders")
    clock += 2000
    write(orders(0), 2)
    admin.requests.clear()
    mb.latestOffset(mb.initialPosition(), None)
    assertEquals(Seq("upcomingOffsets", "partitionCounts"), admin.requests.toSeq)

    // A grown stream: the heads of its new partitions are asked once the planning knows them.
    write(orders(2), 3); write(orders(3), 4)
    clock += 2000
    admin.requests.clear()
    val grown = rt.beginRealTime(end)
    assertEquals(Seq("upcomingOffsets", "partitionCounts"), admin.requests.take(2).toSeq)
    assertEquals(
      Set(orders(2), orders(3)),
      grown.plan.held,
      "held until the older partitions passed the growth"
    )
    assertEquals(
      Map(orders(0) -> 12L, orders(1) -> 10L, orders(2) -> 3L, orders(3) -> 4L),
      rt.reportedHeads
    )
  }

  @Test def aRealTimeBoundaryWaitsForTheHeadsOnlyForABootstrapStream(): Unit = {
    write(orders(0), 10); write(backfill(0), 5)
    val rt = planner("orders")
    val start = rt.initialPosition()
    admin.headsAwaited = 0
    val b = rt.beginRealTime(start)
    assertEquals(
      0,
      admin.headsAwaited,
      "tasks read open-ended: the batch starts without Kafka's answer"
    )
    assertEquals(Set(orders(0)), b.reads.flatMap(_.ranges.map(_.ssp)).toSet)
    val end = rt.endRealTime(b, Map(p0 -> ReaderEnd(Map(orders(0) -> 4L), None)))
    assertEquals(
      "6",
      rt.metrics(Some(end))("maxOffsetsBehindLatest"),
      "the metrics after the batch take the answer"
    )
    assertEquals(1, admin.headsAwaited)

    // A bootstrap stream's chooser reads to the head it had at the start: that one is waited for.
    val boot = planner("orders,backfill", "stream.backfill.bootstrap" -> "true")
    val bootStart = boot.initialPosition()
    admin.headsAwaited = 0
    val bb = boot.beginRealTime(bootStart)
    assertEquals(1, admin.headsAwaited)
    assertEquals(Map(backfill(0) -> 5L), bb.reads.flatMap(_.bootstrapHeads).toMap)
    // ... recorded in the batch's end: the next batch, and a restart, keep to it.
    val bootEnd =
      boot.endRealTime(bb, Map(p0 -> ReaderEnd(Map(orders(0) -> 4L, backfill(0) -> 5L), None)))
    assertEquals(Map(backfill(0) -> 5L), bootEnd.state(ChooserState.Codec).bootstrapHeads)
    write(backfill(0), 3)
    assertEquals(
      Map(backfill(0) -> 5L),
      boot.beginRealTime(bootEnd).reads.flatMap(_.bootstrapHeads).toMap,
      "rates written later do not move it"
    )
    assertEquals(
      Map(backfill(0) -> 5L),
      planner("orders,backfill", "stream.backfill.bootstrap" -> "true").beginRealTime(bootEnd).reads
        .flatMap(_.bootstrapHeads).toMap
    )
    // A head the stream no longer reaches (recreated with fewer records) is lowered to its end.
    val stale = bootEnd.withState(_.updated(
      ChooserState.Codec,
      ChooserState(Map(backfill(0) -> 50L), None)
    ))
    assertEquals(
      Map(backfill(0) -> 8L),
      boot.beginRealTime(stale).reads.flatMap(_.bootstrapHeads).toMap
    )
  }

  @Test def aRealTimeRunRemovesADeadRunsControlResultsOnceNotAtEveryBoundary(): Unit = {
    write(mid, 10)
    val q = planner("mid", "stream.mid.intermediate" -> "true")
    var end = q.initialPosition()
    val perBoundary = (1 to 3).map { i =>
      write(mid, 1)
      listings.clear()
      val b = q.beginRealTime(end)
      end = q.endRealTime(b, Map(p0 -> ReaderEnd(Map(mid -> (10L + i)), None)))
      q.commit(end)
      listings(keys.controlNamespace)
    }
    // The first: the dead run's results, the previous batch's results, and the commit's clean-up;
    // later ones only the clean-up (the previous batch's end carries its readers' states).
    assertEquals(Seq(3, 1, 1), perBoundary)
  }

  @Test def endOfStreamRequestedBeforeTheFirstBatchAdmitsNothingInEitherMode(): Unit = {
    write(orders(0), 10); write(orders(1), 10)
    /* Micro-batches: requested as the run starts, before any batch is planned; then more data
     * arrives. */
    val run = runControl()
    val q = controlledPlanner("orders", Some(run))
    val start = q.initialPosition()
    run.requestEnd()
    val (end, reads) = batch(q, start)
    assertEquals(start, end, "no batch: the source admits nothing once end_of_stream was asked")
    assertTrue(reads.forall(_.ranges.forall(r => r.from == r.until)), s"nothing to read: $reads")
    write(orders(0), 5)
    assertEquals(start, q.latestOffset(start, None), "still nothing after new data")

    // Real-time: the batch begun after the request reads nothing.
    val rtRun = runControl()
    val rt = controlledPlanner("orders", Some(rtRun))
    rtRun.requestEnd()
    val begun = rt.beginRealTime(rt.initialPosition())
    assertEquals(Seq.empty, begun.reads, "a real-time batch after end_of_stream starts no reader")
  }

  @Test def endOfStreamRequestedBetweenBatchesAdmitsNothingMore(): Unit = {
    write(orders(0), 10); write(orders(1), 10)
    val run = runControl()
    val q = controlledPlanner("orders", Some(run))
    val (b1, r1) = batch(q, q.initialPosition())
    assertEquals(
      Map((p0.name, orders(0)) -> (0L, 10L), (p1.name, orders(1)) -> (0L, 10L)),
      ranges(r1)
    )
    write(orders(0), 5)
    run.requestEnd()
    assertEquals(
      b1,
      q.latestOffset(b1, None),
      "the 5 new records are not admitted after end_of_stream"
    )
  }

  @Test def aBatchReadTellsItsReadersWhichIncarnationOfEachTopicTheyRead(): Unit = {
    write(orders(0), 4); write(orders(1), 4)
    admin.ids("orders") = "id-1"
    val reads = BatchRead.plan(
      SourceOptions(Map("kafka.bootstrap.servers" -> "127.0.0.1:1", "streams" -> "orders")),
      admin
    )
    assertEquals(2, reads.size)
    /* Without it a pooled consumer's records of a topic since deleted and created again would
     * serve. */
    reads.foreach(r => assertEquals(Map("orders" -> "id-1"), r.streamIds, r.task.name))
  }

  @Test def aBroadcastSspIsReadBySeveralTasks(): Unit = {
    val rates = SSP.kafka("rates", 0)
    def read(task: TaskName, ssps: SSP*) =
      TaskRead(task, ssps.map(streamctl.system.SspRange(_, 0, 5)), Array.empty)
    assertEquals(
      Set(rates),
      TaskRead.readBySeveral(Seq(read(p0, orders(0), rates), read(p1, orders(1), rates)))
    )
    assertEquals(Set.empty, TaskRead.readBySeveral(Seq(read(p0, orders(0)), read(p1, orders(1)))))
  }

  @Test def minOffsetsPerTriggerWaitsButNeverAtARunsFirstPlanning(): Unit = {
    write(orders(0), 4)
    val options = Seq("minOffsetsPerTrigger" -> "10", "maxTriggerDelay" -> "1h")
    val first = planner("orders", options: _*)
    val start = first.initialPosition()
    // As Spark's source: the delay counts from a run's first trigger, which reads what is there.
    val (end, _) = batch(first, start)
    assertEquals(Map(orders(0) -> 4L), end.minPositions)
    write(orders(0), 4)
    assertSame(end, first.latestOffset(end, None), "4 of 10 records, the delay not passed")
    clock += 3600 * 1000L
    assertEquals(Map(orders(0) -> 8L), first.latestOffset(end, None).minPositions)
    // A restart (a new source, a new planner) does not wait for the minimum either.
    val restarted = planner("orders", options: _*)
    assertEquals(Map(orders(0) -> 8L), restarted.latestOffset(end, None).minPositions)
  }

  @Test def readAllAvailableNeverWaitsForMinOffsetsPerTrigger(): Unit = {
    write(orders(0), 4)
    val p = planner("orders", "minOffsetsPerTrigger" -> "10", "maxTriggerDelay" -> "1h")
    val (end, _) = batch(p, p.initialPosition())
    write(orders(0), 4)
    assertSame(end, p.latestOffset(end, None))
    // Trigger.Once: Spark asks for everything there is.
    assertEquals(Map(orders(0) -> 8L), p.latestOffset(end, None, allAvailable = true).minPositions)
  }

  @Test def aLatestStartpointOnAPartitionStillWrittenToIsNoDataLoss(): Unit = {
    write(orders(0), 10); write(orders(1), 10)
    val first = planner("orders")
    val (end, _) = batch(first, first.initialPosition())
    new StartpointManager(store).write(orders(0), Startpoint.upcoming()) // the query is stopped
    // A producer writes between the heads the planning asks first and the startpoint's
    // resolution, which begins the partition past those heads: not records lost.
    onStartpointListing = () => write(orders(0), 5)
    val next = planner("orders").latestOffset(end, None)
    assertEquals(15L, next.minPositions(orders(0)))
  }
}
