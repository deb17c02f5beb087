package streamctl.planner

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.control.SinkOptions
import streamctl.startpoint.FakeSystemAdmin
import streamctl.system.{SSP, Subscription}

/**
 * The options of Spark's Kafka source and sink, under Spark's names and meanings, and streamctl's
 * older aliases.
 */
class SparkOptionsTest {
  private val servers = "kafka.bootstrap.servers" -> "127.0.0.1:1"
  private def source(kv: (String, String)*) = SourceOptions(Map(servers) ++ kv)
  private def fails(kv: (String, String)*): String =
    assertThrows(classOf[StreamctlException], () => { source(kv: _*); () }).getMessage

  private val admin = new FakeSystemAdmin()
    .add(SSP.kafka("orders", 0), 10, Seq(100L, 200L, 300L))
    .add(SSP.kafka("orders", 1), 0, Seq(150L))
  private val orders = Set(SSP.kafka("orders", 0), SSP.kafka("orders", 1))

  @Test def sparkNamesAndStreamctlAliasesMeanTheSame(): Unit = {
    val spark = source(
      "subscribe" -> "orders",
      "maxOffsetsPerTrigger" -> "7",
      "failOnDataLoss" -> "false",
      "kafkaConsumer.pollTimeoutMs" -> "500",
      "startingOffsets" -> "earliest"
    )
    val old = source(
      "streams" -> "orders",
      "max.records.per.batch" -> "7",
      "fail.on.data.loss" -> "false",
      "poll.timeout.ms" -> "500",
      "starting.offsets" -> "earliest"
    )
    for ((o, written) <- Seq(spark -> "startingOffsets", old -> "starting.offsets")) {
      assertEquals(Subscription.Topics(Seq("orders")), o.subscription)
      assertEquals(Some(7L), o.maxRecordsPerBatch)
      assertFalse(o.failOnDataLoss)
      assertEquals(500L, o.readWait.ms)
      // Errors about the bound name the option as the user wrote it.
      assertEquals(OffsetBound.Named(written, latest = false), o.starting(batch = false))
      // A user's class reads each option under one name, whichever spelling the user wrote.
      assertEquals(Some("orders"), o.chooser.options.get("subscribe"))
      assertEquals(Some("7"), o.chooser.options.get("maxoffsetspertrigger"))
    }
    assertTrue(fails("subscribe" -> "orders", "streams" -> "orders").contains("give it once"))
  }

  @Test def errorsNameTheOptionAsTheUserWroteIt(): Unit = {
    val oldest = fails("streams" -> "orders", "starting.offsets" -> "oldest")
    assertTrue(oldest.startsWith("Option 'starting.offsets'"), oldest)
    assertFalse(oldest.contains("startingOffsets"), oldest)
    val both = fails("streams" -> "orders", "subscribePattern" -> "o.*")
    assertTrue(both.contains("'streams'") && both.contains("'subscribePattern'"), both)
  }

  @Test def exactlyOneSubscriptionIsRequiredAndTheErrorSaysWhich(): Unit = {
    val none = fails()
    assertTrue(
      none.contains("'subscribe'") && none.contains("'subscribePattern'") && none.contains(
        "'assign'"
      ) &&
        none.contains("'streams'"),
      none
    )
    assertTrue(fails("subscribe" -> "a", "subscribePattern" -> "a.*").contains("Only one of"))
    assertEquals(
      Subscription.Assign(Map("orders" -> Seq(0, 2))),
      source("assign" -> """{"orders":[2,0]}""").subscription
    )
    assertTrue(fails("assign" -> """{"orders":"0"}""").contains("option 'assign'"))
    assertTrue(fails("subscribePattern" -> "(").contains("not a Java regular expression"))
    assertTrue(fails(
      "subscribePattern" -> "orders-.*",
      "stream.rates.bootstrap" -> "true"
    ).contains("does not match"))
  }

  @Test def sparkOptionsThatConflictWithTasksAreRefusedSayingWhatToUseInstead(): Unit = {
    val min = fails("subscribe" -> "orders", "minPartitions" -> "8")
    assertTrue(
      min.startsWith("Option 'minPartitions' (of Spark's Kafka connector) is not supported") &&
        min.contains("never splits a partition") && min.contains("more partitions"),
      min
    )
    val prefix = fails("subscribe" -> "orders", "groupIdPrefix" -> "x")
    assertTrue(prefix.contains("no consumer group") && prefix.contains("'kafka.group.id'"), prefix)
    assertTrue(fails(
      "subscribe" -> "orders",
      "maxRecordsPerPartition" -> "5"
    ).contains("'maxOffsetsPerTrigger'"))
    // Spark's kafka.group.id is passed on: streamctl never joins the group nor commits to it.
    assertEquals(
      "g",
      source("subscribe" -> "orders", "kafka.group.id" -> "g").kafka.user("group.id")
    )
  }

  @Test def endingOffsetsAreForBatchReadsOnly(): Unit = {
    val o = source("subscribe" -> "orders", "endingOffsets" -> "latest")
    val e = assertThrows(classOf[StreamctlException], () => o.checkStreaming())
    assertTrue(e.getMessage.contains("'endingOffsets' is for batch reads"), e.getMessage)
    val latestStart = assertThrows(
      classOf[StreamctlException],
      () => {
        source("subscribe" -> "orders", "startingOffsets" -> "latest").starting(batch = true); ()
      }
    )
    assertTrue(
      latestStart.getMessage.contains("'startingOffsets' cannot be 'latest'"),
      latestStart.getMessage
    )
    assertTrue(fails(
      "subscribe" -> "orders",
      "endingOffsets" -> """{"orders":{"0":-2}}"""
    ).contains("-2 (earliest)"))
  }

  @Test def perPartitionOffsetsResolveEarliestLatestAndExactOnes(): Unit = {
    val start = source(
      "subscribe" -> "orders",
      "startingOffsets" -> """{"orders":{"0":-2,"1":-1}}"""
    ).starting(batch = false)
    assertEquals(
      Map(SSP.kafka("orders", 0) -> 10L, SSP.kafka("orders", 1) -> 1L),
      start.resolve(admin, orders, false)
    )
    val exact = source(
      "subscribe" -> "orders",
      "startingOffsets" -> """{"orders":{"0":11,"1":0}}"""
    ).starting(batch = false)
    assertEquals(
      Map(SSP.kafka("orders", 0) -> 11L, SSP.kafka("orders", 1) -> 0L),
      exact.resolve(admin, orders, false)
    )
    // Past the end: the option's mistake, said so at once (not later as a truncated topic).
    val past = source(
      "subscribe" -> "orders",
      "startingOffsets" -> """{"orders":{"0":11,"1":500}}"""
    ).starting(batch = false)
    val beyond =
      assertThrows(classOf[StreamctlException], () => { past.resolve(admin, orders, false); () })
    assertTrue(
      beyond.getMessage.contains(
        "Option 'startingOffsets' gives offset 500 for stream 'orders' partition 1, past its end (1"
      ),
      beyond.getMessage
    )
    val partial = source(
      "subscribe" -> "orders",
      "startingOffsets" -> """{"orders":{"0":11}}"""
    ).starting(batch = false)
    val e =
      assertThrows(classOf[StreamctlException], () => { partial.resolve(admin, orders, false); () })
    assertTrue(e.getMessage.contains("stream 'orders' partition 1"), e.getMessage)
    assertTrue(fails(
      "subscribe" -> "orders",
      "startingOffsets" -> """{"orders":{"x":1}}"""
    ).contains("not a partition number"))
  }

  /**
   * As Spark, a per-partition JSON names exactly the partitions read; a partition named beyond them
   * is refused, never ignored.
   */
  @Test def perPartitionJsonNamingAPartitionTheQueryDoesNotReadIsRefusedNamingItAndTheValidOnes()
      : Unit = {
    def refused(option: String, json: String, read: Set[SSP] = orders): String = {
      val o = source("subscribe" -> "orders", option -> json)
      val bound = if (option.startsWith("ending")) o.ending else o.starting(batch = false)
      assertThrows(
        classOf[StreamctlException],
        () => { bound.resolve(admin, read, false); () }
      ).getMessage
    }
    // A partition that does not exist: the one partition rule's words, with the valid partitions.
    assertEquals(
      "Partition 2 of stream 'orders' does not exist (option 'startingOffsets'): it has 2 partitions (0..1)",
      refused("startingOffsets", """{"orders":{"0":1,"1":-2,"2":5}}""")
    )
    // A stream the query does not read is refused without asking the broker.
    val asked = admin.calls("partitionCounts")
    assertEquals(
      "Option 'startingOffsets' names stream 'rates' partition 0, which the query does not read " +
        "(it reads stream 'orders' partitions 0, 1): give exactly the partitions the query reads",
      refused("startingOffsets", """{"orders":{"0":1,"1":-2},"rates":{"0":0}}""")
    )
    assertEquals(asked, admin.calls("partitionCounts"))
    // A partition that exists but is not read (Spark's assign reads only the partitions it names).
    assertEquals(
      "Option 'startingOffsets' names stream 'orders' partition 1, which the query does not read " +
        "(it reads stream 'orders' partition 0): give exactly the partitions the query reads",
      refused(
        "startingOffsets",
        """{"orders":{"0":1,"1":-2}}""",
        read = Set(SSP.kafka("orders", 0))
      )
    )
    // The same rule for every per-partition option: timestamps, and where a batch read ends.
    assertEquals(
      "Partition 5 of stream 'orders' does not exist (option 'startingOffsetsByTimestamp'): it has 2 partitions (0..1)",
      refused("startingOffsetsByTimestamp", """{"orders":{"0":100,"1":100,"5":100}}""")
    )
    assertEquals(
      "Partition 3 of stream 'orders' does not exist (option 'endingOffsets'): it has 2 partitions (0..1)",
      refused("endingOffsets", """{"orders":{"0":1,"1":1,"3":1}}""")
    )
    assertEquals(
      "Option 'endingOffsetsByTimestamp' names stream 'rates' partition 2, which the query does not read " +
        "(it reads stream 'orders' partitions 0, 1): give exactly the partitions the query reads",
      refused("endingOffsetsByTimestamp", """{"orders":{"0":1,"1":1},"rates":{"4":1,"2":1}}""")
    )
  }

  @Test def timestampsResolveToTheFirstRecordAtOrAfterThemWithSparksPrecedenceAndStrategy()
      : Unit = {
    def start(kv: (String, String)*) =
      source(("subscribe" -> "orders") +: kv: _*).starting(batch = false)
    // startingTimestamp wins over startingOffsetsByTimestamp, which wins over startingOffsets.
    val all = start(
      "startingTimestamp" -> "150",
      "startingOffsetsByTimestamp" -> """{"orders":{"0":0,"1":0}}""",
      "startingOffsets" -> "latest"
    )
    assertEquals(
      Map(SSP.kafka("orders", 0) -> 11L, SSP.kafka("orders", 1) -> 0L),
      all.resolve(admin, orders, false)
    )
    val latest =
      start("startingTimestamp" -> "250", "startingOffsetsByTimestampStrategy" -> "latest")
    assertEquals(
      Map(SSP.kafka("orders", 0) -> 12L, SSP.kafka("orders", 1) -> 1L),
      latest.resolve(
        admin,
        orders,
        source(
          "subscribe" -> "orders",
          "startingOffsetsByTimestampStrategy" -> "latest"
        ).noTimestampMatchIsLatest
      )
    )
    val strict = assertThrows(
      classOf[StreamctlException],
      () => { start("startingTimestamp" -> "250").resolve(admin, orders, false); () }
    )
    assertTrue(
      strict.getMessage.contains("stream 'orders' partition 1") && strict.getMessage.contains(
        "'latest'"
      ),
      strict.getMessage
    )
    assertEquals(
      Map(SSP.kafka("orders", 0) -> 10L, SSP.kafka("orders", 1) -> 0L),
      start("startingOffsetsByTimestamp" -> """{"orders":{"0":100,"1":100}}""").resolve(
        admin,
        orders,
        false
      )
    )
  }

  @Test def theSinkWritesPlainRecordsUnlessAskedForTheIntermediateFormat(): Unit = {
    val plain = SinkOptions(Map(servers, "topic" -> "out"))
    assertFalse(plain.intermediate)
    assertEquals(Some("out"), plain.topic)
    assertEquals(None, SinkOptions(Map(servers)).topic) // each row's 'topic' column says
    assertEquals(
      Some("mid"),
      SinkOptions(Map(servers, "stream" -> "mid", "intermediate" -> "true")).topic
    )
    val control = assertThrows(
      classOf[StreamctlException],
      () => { SinkOptions(Map(servers, "topic" -> "out", "producer.name" -> "a")); () }
    )
    assertTrue(
      control.getMessage.contains("set option 'intermediate' to 'true'"),
      control.getMessage
    )
    val noTopic = assertThrows(
      classOf[StreamctlException],
      () => { SinkOptions(Map(servers, "intermediate" -> "true")); () }
    )
    assertTrue(noTopic.getMessage.contains("option 'topic'"), noTopic.getMessage)
  }

  @Test def sinkErrorsNameTheOptionAsTheUserWroteIt(): Unit = {
    val control = assertThrows(
      classOf[StreamctlException],
      () => { SinkOptions(Map(servers, "topic" -> "out", "Producer.Name" -> "a")); () }
    )
    assertTrue(control.getMessage.startsWith("Option 'Producer.Name' is about"), control.getMessage)
    val count = assertThrows(
      classOf[StreamctlException],
      () => {
        SinkOptions(Map(
          servers,
          "STREAM" -> "mid",
          "Intermediate" -> "true",
          "producer.COUNT" -> "2"
        ));
        ()
      }
    )
    assertTrue(count.getMessage.startsWith("Option 'producer.COUNT' is 2"), count.getMessage)
    assertTrue(count.getMessage.contains("its own 'producer.name'"), count.getMessage)
  }

  @Test def anIntermediateStreamIsWrittenTransactionallyUnlessRealTimeOrAskedOtherwise(): Unit = {
    def sink(more: (String, String)*) = SinkOptions(Map(servers, "topic" -> "out") ++ more)
    val mid = sink("intermediate" -> "true")
    assertTrue(mid.transactional(realTime = false))
    // A real-time batch lasts as long as the query runs: one transaction would hide it all.
    assertFalse(mid.transactional(realTime = true))
    assertFalse(sink("intermediate" -> "true", "transactional" -> "false").transactional(false))
    // A plain sink is format("kafka")'s drop-in: at least once unless asked.
    assertFalse(sink().transactional(realTime = false))
    assertTrue(sink("transactional" -> "true").transactional(realTime = false))
    // The prefix names the ids of a sink that is transactional by default, too.
    assertEquals(
      "etl",
      sink("intermediate" -> "true", "transactionalIdPrefix" -> "etl").transactionalIdPrefix
    )
  }

  @Test def aTransactionalSinkNamesItsIdsAndRefusesWhatCannotWork(): Unit = {
    val o = SinkOptions(Map(
      servers,
      "topic" -> "out",
      "Transactional" -> "true",
      "transactionalIdPrefix" -> "etl"
    ))
    assertTrue(o.transactional(realTime = false))
    assertEquals(
      "etl-q1-out-3",
      streamctl.system.TransactionalIds(o.transactionalIdPrefix, "q1", "out").of(3)
    )
    assertEquals(
      "streamctl",
      SinkOptions(Map(servers, "topic" -> "out", "transactional" -> "true")).transactionalIdPrefix
    )
    val prefixAlone = assertThrows(
      classOf[StreamctlException],
      () => { SinkOptions(Map(servers, "topic" -> "out", "TransactionalIdPrefix" -> "etl")); () }
    )
    assertTrue(
      prefixAlone.getMessage.startsWith(
        "Option 'TransactionalIdPrefix' names the transactional ids"
      ),
      prefixAlone.getMessage
    )
    val ownId = assertThrows(
      classOf[StreamctlException],
      () => {
        SinkOptions(Map(
          servers,
          "topic" -> "out",
          "transactional" -> "true",
          "kafka.transactional.id" -> "x"
        ));
        ()
      }
    )
    assertTrue(
      ownId.getMessage.contains(
        "its own transactional id, named by option 'transactionalIdPrefix'"
      ),
      ownId.getMessage
    )
  }

  @Test def anIntermediateStreamIsReadCommittedUnlessTheUserSaysOtherwise(): Unit = {
    import org.apache.kafka.common.IsolationLevel._
    assertEquals(READ_UNCOMMITTED, source("subscribe" -> "orders").kafka.isolationLevel)
    assertEquals(
      READ_COMMITTED,
      source("subscribe" -> "mid", "stream.mid.intermediate" -> "true").kafka.isolationLevel
    )
    assertEquals(
      READ_UNCOMMITTED,
      source(
        "subscribe" -> "mid",
        "stream.mid.intermediate" -> "true",
        "kafka.isolation.level" -> "read_uncommitted"
      ).kafka.isolationLevel
    )
    assertEquals(
      READ_COMMITTED,
      source(
        "subscribe" -> "orders",
        "kafka.isolation.level" -> "read_committed"
      ).kafka.isolationLevel
    )
  }
}
