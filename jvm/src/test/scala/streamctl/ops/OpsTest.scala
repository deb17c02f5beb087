package streamctl.ops

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.{Json, StreamctlException}
import streamctl.metadata.{InMemoryMetadataStore, StoreLayout}
import streamctl.plan.SourcePosition
import streamctl.startpoint.{FakeSystemAdmin, Startpoint, StartpointCommands}
import streamctl.system.{SSP, TaskName}

class OpsTest {
  private val committed: Path =
    Paths.get(sys.props.getOrElse("basedir", "."), "tests", "data", "checkpoint-08f2737")
  private val conf = new Configuration()

  @Test def readsTheLastCommittedBatchOfACheckpoint(): Unit = {
    val ck = QueryCheckpoint.read(committed.toString, conf)
    val batch = ck.committed.get
    assertEquals(14L, batch.batchId)
    assertEquals(None, ck.pending)
    assertEquals(Set("0"), batch.sources.keySet)
    assertEquals(
      30L,
      batch.sources("0").tasks(TaskName("Partition 0"))(SSP.kafka("ckpt-orders", 0))
    )
  }

  /**
   * A query checkpoint with one batch per entry of `ends` (where it ended on o-0, after a line of
   * another connector), the first `commits` of them committed.
   */
  private def checkpointOf(ends: Seq[Long], commits: Int): Path = {
    val dir = Files.createTempDirectory("ck")
    Files.createDirectories(dir.resolve("offsets"))
    Files.createDirectories(dir.resolve("commits"))
    ends.zipWithIndex.foreach { case (o, id) =>
      Files.writeString(
        dir.resolve(s"offsets/$id"),
        s"""v1\n{"batchWatermarkMs":7,"batchTimestampMs":9}\n{"orders":{"0":1}}\n${SourcePosition(
            Map(TaskName("Partition 0") -> Map(SSP.kafka("o", 0) -> o))
          ).json}\n"""
      )
    }
    (0 until commits).foreach(id => Files.writeString(dir.resolve(s"commits/$id"), "v1\n{}\n"))
    dir
  }

  @Test def aPlannedBatchWithoutCommitIsPendingNotCommitted(): Unit = {
    val dir = checkpointOf(Seq(5L, 8L), commits = 1)
    val ck = QueryCheckpoint.read(dir.toString, conf)
    assertEquals(Some(0L), ck.committed.map(_.batchId))
    assertEquals(Some(1L), ck.pending.map(_.batchId))
    // Line 0 is another connector's offset (Spark's Kafka source): skipped; ours is source 1.
    assertEquals(Set("1"), ck.committed.get.sources.keySet)
    assertEquals(7L, ck.committed.get.watermarkMs)
  }

  @Test def anOffsetLogOfFormatV2NamesItsSourcesOnEachLine(): Unit = {
    val ours = SourcePosition(Map(TaskName("Partition 0") -> Map(SSP.kafka("o", 0) -> 12L))).json
    // Spark's v2 writes `<source id>:<offset>`: here a Kafka source first, then ours (named by
    // source evolution), then a source without an offset yet.
    val batch = QueryCheckpoint.parseBatch(
      s"""v2\n{"batchWatermarkMs":7,"batchTimestampMs":9,"conf":{}}\nclicks:{"clicks":{"0":1}}\norders:$ours\nlate:-\n""",
      "offsets/3",
      3L
    )
    assertEquals(Set("orders"), batch.sources.keySet)
    assertEquals(12L, batch.sources("orders").tasks(TaskName("Partition 0"))(SSP.kafka("o", 0)))
    assertEquals((9L, 7L), (batch.timestampMs, batch.watermarkMs))
    val e = assertThrows(
      classOf[StreamctlException],
      () => QueryCheckpoint.parseBatch("v3\n{}\n", "offsets/4", 4L)
    )
    assertTrue(e.getMessage.contains("offsets/4 is offset log format 'v3'"), e.getMessage)
    // A streamctl offset it cannot read names the file and the source, not only "the checkpoint".
    val newer = assertThrows(
      classOf[StreamctlException],
      () =>
        QueryCheckpoint.parseBatch(
          "v2\n{}\norders:{\"version\":99,\"next\":{}}\n",
          "/chk/offsets/5",
          5L
        )
    )
    assertTrue(newer.getMessage.contains("/chk/offsets/5, source orders"), newer.getMessage)
  }

  @Test def describeReadsAgainWhenTheQueryCommittedAndDeletedResultsMeanwhile(): Unit = {
    val ck = Files.createTempDirectory("ck")
    Files.walk(committed).forEach { from =>
      val to = ck.resolve(committed.relativize(from).toString)
      if (Files.isDirectory(from)) Files.createDirectories(to) else Files.copy(from, to)
    }
    var raced = false
    def open(location: String): streamctl.metadata.MetadataStore = {
      val real = streamctl.metadata.MetadataStore.open(location, conf)
      new streamctl.metadata.MetadataStore {
        def get(namespace: String, key: String): Option[String] = {
          if (namespace == "control-0" && !raced) {
            // The query commits batch 15 (planned from 14's results) and deletes those results
            // between describe's listing and its read.
            raced = true
            Files.copy(ck.resolve("offsets/14"), ck.resolve("offsets/15"))
            Files.copy(ck.resolve("commits/14"), ck.resolve("commits/15"))
            real.delete(namespace, key)
          }
          real.get(namespace, key)
        }
        def put(namespace: String, key: String, value: String): Unit =
          real.put(namespace, key, value)
        def delete(namespace: String, key: String): Unit = real.delete(namespace, key)
        def keys(namespace: String): Seq[String] = real.keys(namespace)
      }
    }
    val d = QueryDescription.describe(ck.toString, None, None, conf, open)
    assertTrue(raced)
    assertEquals(
      15L,
      d.get("committedBatch").asLong,
      "read again, of the batch committed meanwhile"
    )
  }

  @Test def describesTheCommittedCheckpointWithItsReconciledControlStates(): Unit = {
    val d = QueryDescription.describe(committed.toString, None, None, conf)
    val rows = d.get("partitions").elements().asScala.toSeq
    assertEquals(8, rows.size)
    val mid0 =
      rows.find(r => r.get("stream").asText == "ckpt-mid" && r.get("partition").asInt == 0).get
    assertEquals(9L, mid0.get("committed").asLong)
    assertTrue(mid0.get("lag").isNull, "no broker given: no lag")
    assertEquals(2, mid0.get("control").get("producers").asInt)
    assertEquals(
      Seq("p0"),
      mid0.get("control").get("endOfStreamProducers").elements().asScala.map(_.asText).toSeq
    )
    assertFalse(d.get("upstream").get("endOfStream").asBoolean)
    assertEquals("no bootstrap servers given", d.get("broker").asText)
  }

  @Test def aPathWithoutAQueryIsAnErrorNotAnEmptyAnswer(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => QueryDescription.describe(Files.createTempDirectory("x").toString, None, None, conf)
    )
    assertTrue(e.getMessage.startsWith("No streamctl query at"), e.getMessage)
  }

  @Test def shiftsAreRelativeToTheCommittedOffsetAndClampedToTheBroker(): Unit = {
    val admin = new FakeSystemAdmin().add(
      SSP.kafka("o", 0),
      2,
      Seq.fill(8)(0L)
    ).add(SSP.kafka("o", 1), 0, Seq.fill(4)(0L))
    val committed = Map(SSP.kafka("o", 0) -> 6L, SSP.kafka("o", 1) -> 3L)
    val steps = ResetPlan.plan(
      Seq(ResetPlan.Target("o", None)),
      ResetPlan.To.ShiftBy(-5),
      None,
      committed,
      Some(admin)
    )
    assertEquals(Seq(Some(2L), Some(0L)), steps.map(_.target))
    assertEquals("clamped from 1", steps.head.note)
    assertEquals(Seq(Some(6L), Some(3L)), steps.map(_.current))
    val current = ResetPlan.plan(
      Seq(ResetPlan.Target("o", Some(Seq(1)))),
      ResetPlan.To.Current,
      None,
      committed,
      None
    )
    // A startpoint carries its creation time, so compare what it points at, not the whole value.
    assertEquals(
      Seq(3L),
      current.map(_.startpoint).collect { case Startpoint.Specific(offset, _) => offset }
    )
    val e = assertThrows(
      classOf[StreamctlException],
      () =>
        ResetPlan.plan(
          Seq(ResetPlan.Target("o", None)),
          ResetPlan.To.Current,
          None,
          Map.empty,
          Some(admin)
        )
    )
    assertTrue(
      e.getMessage.contains("--to-current needs the committed offset of o-0"),
      e.getMessage
    )
  }

  @Test def relativeResetsMeasureFromTheBatchARestartReplays(): Unit = {
    // Batch 1 is logged but not committed: a restart replays it, to 8, before any startpoint
    // applies, so a reset measured from batch 0's 5 would read 5..8 twice.
    val dir = checkpointOf(Seq(5L, 8L), commits = 1)
    def reset(to: String, value: Option[Long]) = {
      val req = Json.obj().put("checkpoint", dir.toString).put("to", to)
      value.foreach(req.put("value", _))
      req.putArray("topics").addObject().put("topic", "o")
      OpsMain.run("reset", req)
    }
    val current = reset("current", None)
    val row = current.get("plan").get(0)
    assertEquals((8L, 8L), (row.get("current").asLong, row.get("target").asLong))
    assertEquals(1L, current.get("currentBatch").get("batchId").asLong)
    assertFalse(current.get("currentBatch").get("committed").asBoolean)
    assertEquals(6L, reset("shift", Some(-2L)).get("plan").get(0).get("target").asLong)
  }

  @Test def partitionsAreCheckedByTheOneRuleWithOrWithoutABroker(): Unit = {
    val admin = new FakeSystemAdmin().add(SSP.kafka("o", 0), 0, Nil).add(SSP.kafka("o", 1), 0, Nil)
    def refused(
        targets: Seq[ResetPlan.Target],
        to: ResetPlan.To,
        broker: Option[FakeSystemAdmin]
    ): String =
      assertThrows(
        classOf[StreamctlException],
        () => ResetPlan.plan(targets, to, None, Map.empty, broker)
      ).getMessage
    assertEquals(
      "Partition 5 of stream 'o' does not exist (startpoints reset --from-file): it has 2 partitions (0..1)",
      refused(Nil, ResetPlan.To.Offsets(Map(SSP.kafka("o", 5) -> 0L)), Some(admin))
    )
    assertEquals(
      "Partition -1 of stream 'o' does not exist (startpoints reset --from-file): it has 2 partitions (0..1)",
      refused(Nil, ResetPlan.To.Offsets(Map(SSP.kafka("o", -1) -> 0L)), Some(admin))
    )
    assertEquals(
      "Partition 2 of stream 'o' does not exist (startpoints reset): it has 2 partitions (0..1)",
      refused(Seq(ResetPlan.Target("o", Some(Seq(0, 2)))), ResetPlan.To.Earliest, Some(admin))
    )
    // Without a broker the count is unknown, but a negative partition is still no partition.
    assertEquals(
      "Partition -1 of stream 'o' does not exist (startpoints reset): partitions are numbered from 0",
      refused(Seq(ResetPlan.Target("o", Some(Seq(-1)))), ResetPlan.To.Earliest, None)
    )
    assertEquals(
      "Partition -3 of stream 'o' does not exist (startpoints reset --from-file): partitions are numbered from 0",
      refused(Nil, ResetPlan.To.Offsets(Map(SSP.kafka("o", -3) -> 0L)), None)
    )
  }

  @Test def aResetWritesEveryRowOrNone(): Unit = {
    val store = new InMemoryMetadataStore
    val commands = new StartpointCommands(store, None, "mem")
    def refused(offsets: Map[SSP, Long]): String = {
      val steps = ResetPlan.plan(Nil, ResetPlan.To.Offsets(offsets), None, Map.empty, None)
      assertThrows(
        classOf[StreamctlException],
        () => ResetPlan.execute(steps, None, commands)
      ).getMessage
    }
    // --from-file rows `orders,0,5` and `orders/1,0,5`: the second is no stream name.
    val slash = refused(Map(SSP.kafka("orders", 0) -> 5L, SSP.kafka("orders/1", 0) -> 5L))
    assertTrue(slash.contains("'orders/1'"), slash)
    assertEquals(Seq.empty, store.keys(StoreLayout.StartpointsNamespace))
    // 'kafka/<238 chars>/9' is 250 characters once encoded, the most the store takes; '/10' is not.
    val long = "t" * 238
    val tooLong = refused(Map(SSP.kafka(long, 9) -> 5L, SSP.kafka(long, 10) -> 5L))
    assertTrue(tooLong.contains(s"kafka/$long/10") && tooLong.contains("too long"), tooLong)
    assertEquals(Seq.empty, store.keys(StoreLayout.StartpointsNamespace))
  }

  @Test def durationsAreIsoOrSparkStyle(): Unit = {
    assertEquals(5400000L, ResetPlan.durationMs("PT1H30M"))
    assertEquals(5400000L, ResetPlan.durationMs("90min"))
    assertThrows(classOf[StreamctlException], () => ResetPlan.durationMs("P1X"))
    assertEquals(1714557600000L, ResetPlan.instantMs("2024-05-01T12:00:00+02:00"))
    val e =
      assertThrows(classOf[StreamctlException], () => ResetPlan.instantMs("2024-05-01T10:00:00"))
    assertTrue(e.getMessage.contains("has no timezone"), e.getMessage)
  }

  @Test def theHistoryKeepsTheLastBatchesOnlyAndAReplayReplacesItsBatch(): Unit = {
    val store = new InMemoryMetadataStore
    val history = new ProgressHistory(store, StoreLayout.Source("0"))
    def summary(b: Long, lag: Long) = BatchSummary(
      b,
      b * 1000,
      Map("o" -> 1L),
      Map(SSP.kafka("o", 0) -> lag),
      None,
      None,
      endOfStream = false,
      Nil,
      0
    )
    (0L until ProgressHistory.Limit + 10L).foreach(b => history.append(summary(b, b)))
    history.append(summary(ProgressHistory.Limit + 9L, 0)) // the last batch again, as after a crash
    val kept = history.load()
    assertEquals(ProgressHistory.Limit, kept.size)
    assertEquals(10L, kept.head.get("batch").asLong)
    assertEquals(0L, kept.last.get("lag").get("o-0").asLong)
    // One value per batch kept, the older ones deleted as the history moves on.
    assertEquals(ProgressHistory.Limit, store.keys(StoreLayout.ProgressNamespace).size)
  }

  @Test def aBatchWritesTheSameWhateverTheHistoryHolds(): Unit = {
    val written = scala.collection.mutable.Buffer[Int]()
    val store = new InMemoryMetadataStore {
      override def put(namespace: String, key: String, value: String): Unit = {
        written += value.length; super.put(namespace, key, value)
      }
    }
    val history = new ProgressHistory(store, StoreLayout.Source("0"))
    val lag = (0 until 1024).map(p => SSP.kafka("o", p) -> 3L).toMap
    (1000L until 1300L).foreach(b =>
      history.append(BatchSummary(
        b,
        1700000000000L + b,
        Map("o" -> 2048L),
        lag,
        None,
        None,
        endOfStream = false,
        Nil,
        0
      ))
    )
    assertEquals(1, written.distinct.size, "every batch writes one value of one size")
    assertTrue(written.head < 1024 * 4, s"${written.head} bytes for 1,024 partitions")
    assertEquals(3L, history.load().last.get("lag").get("o-1023").asLong)
  }

  @Test def lastRecordTimesAreKeptAfterTheirOldestAndReadBackWhole(): Unit = {
    val written = scala.collection.mutable.Buffer[String]()
    val store = new InMemoryMetadataStore {
      override def put(namespace: String, key: String, value: String): Unit = {
        written += value; super.put(namespace, key, value)
      }
    }
    val history = new ProgressHistory(store, StoreLayout.Source("0"))
    val times = (0 until 1024).map(p => SSP.kafka("o", p) -> (1700000000000L + p)).toMap
    val lag = times.map { case (s, _) => s -> 0L }
    history.append(BatchSummary(
      7,
      1700000005000L,
      Map.empty,
      lag,
      None,
      None,
      false,
      Nil,
      0,
      lastRecordMs = times
    ))
    assertEquals(times, history.lastRecordTimes())
    // A few digits per partition, not thirteen.
    assertTrue(written.last.length < 1024 * 8, s"${written.last.length} bytes for 1,024 partitions")
    // An entry of the first form (times whole, no base) still reads.
    store.put(
      StoreLayout.ProgressNamespace,
      StoreLayout.Source("0").progressKey(8),
      """{"batch":8,"lag":{"kafka/o":[0]},"lastRecordTimeMs":{"kafka/o":[1700000000009]},"version":2}"""
    )
    assertEquals(Map(SSP.kafka("o", 0) -> 1700000000009L), history.lastRecordTimes())
  }

  @Test def aHistoryOfTheOldFormStillReadsAndIsSweptAway(): Unit = {
    val store = new InMemoryMetadataStore
    store.put(
      StoreLayout.ProgressNamespace,
      "history-0",
      """{"version":1,"batches":[{"batch":1,"timeMs":1000,"admitted":{},"lag":{"kafka/o/0":5}}]}"""
    )
    val history = new ProgressHistory(store, StoreLayout.Source("0"))
    history.append(BatchSummary(
      2,
      2000,
      Map.empty,
      Map(SSP.kafka("o", 0) -> 4L),
      None,
      None,
      endOfStream = false,
      Nil,
      0
    ))
    assertEquals(Seq(1L, 2L), history.load().map(_.get("batch").asLong))
    assertEquals(
      Seq("""{"o-0":5}""", """{"o-0":4}"""),
      history.load().map(b => Json.write(b.get("lag")))
    )
    history.append(BatchSummary(
      64,
      64000,
      Map.empty,
      Map(SSP.kafka("o", 0) -> 1L),
      None,
      None,
      endOfStream = false,
      Nil,
      0
    ))
    assertEquals(Seq(2L, 64L), history.load().map(_.get("batch").asLong))
  }

  @Test def theBatchLineSaysWhatStreamctlDecided(): Unit = {
    val start = SourcePosition(Map(TaskName("Partition 0") -> Map(SSP.kafka("o", 0) -> 10L)))
    val end = SourcePosition(Map(TaskName("Partition 0") -> Map(SSP.kafka("o", 0) -> 14L)))
    val s = BatchSummary.of(
      3,
      0,
      Some(start),
      end,
      Map(SSP.kafka("o", 0) -> 20L),
      Some(0L),
      Map("watermark" -> "1000", "endOfStream" -> "true", "tasksMoved" -> "2")
    )
    assertEquals(
      "batch 3: admitted o=4; lag max 6; watermark 1970-01-01T00:00:00Z; upstream watermark " +
        "1970-01-01T00:00:01Z; end-of-stream; 2 task(s) moved",
      s.line
    )
    val partly = BatchSummary.of(
      4,
      0,
      Some(end),
      end,
      Map.empty,
      None,
      Map(
        "control" -> """{"mid-0":{"taskCount":2,"endOfStream":2},"mid-1":{"taskCount":2,"endOfStream":1}}"""
      )
    )
    assertEquals("batch 4: admitted o=0; lag unknown; ended: mid-0", partly.line)
    assertEquals("""{"o":4}""", Json.write(s.toJson.get("admitted")))
  }
}
