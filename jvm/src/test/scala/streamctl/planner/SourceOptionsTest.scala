package streamctl.planner

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.chooser.ChooserConfig

/** The source's options, read through every feature's specs. */
class SourceOptionsTest {
  private def options(kv: (String, String)*) =
    SourceOptions(Map("kafka.bootstrap.servers" -> "127.0.0.1:1", "streams" -> "Rates,tx.v2") ++ kv)

  private def grouping(extra: (String, String)*) =
    SourceOptions(Map(
      "kafka.bootstrap.servers" -> "127.0.0.1:1",
      "streams" -> "orders,rates"
    ) ++ extra).grouping

  private def fails(fragments: String*)(extra: (String, String)*): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => { grouping(extra: _*); () })
    fragments.foreach(f => assertTrue(e.getMessage.contains(f), e.getMessage))
  }

  @Test def keysAreCaseInsensitiveButStreamNamesAreNot(): Unit = {
    val c = options(
      "Stream.Rates.Bootstrap" -> "true",
      "stream.tx.v2.PRIORITY" -> "4",
      "Chooser" -> "time-aligned",
      "CHOOSER.batch.size" -> "3"
    ).chooser
    assertEquals(Set("Rates"), c.bootstrapStreams)
    assertEquals(4, c.priorityOf("tx.v2"))
    assertEquals(ChooserConfig.TimeAligned, c.kind)
    assertEquals(Some(3), c.batchSize)
  }

  @Test def kafkaSettingsReachKafkaInLowerCaseAsSparksConnectorPassesThem(): Unit = {
    val o = options("kafka.Isolation.Level" -> "read_committed", "KAFKA.Client.Id" -> "etl")
    assertEquals(org.apache.kafka.common.IsolationLevel.READ_COMMITTED, o.kafka.isolationLevel)
    val e = assertThrows(
      classOf[StreamctlException],
      () => { options("kafka.Enable.Auto.Commit" -> "true"); () }
    )
    assertTrue(e.getMessage.contains("'kafka.enable.auto.commit'"), e.getMessage)
  }

  @Test def aTopicSubscribedTwiceIsReadOnceAsInSpark(): Unit =
    assertEquals(
      streamctl.system.Subscription.Topics(Seq("orders", "rates")),
      SourceOptions(Map("kafka.bootstrap.servers" -> "b:1", "subscribe" -> "orders,rates,orders"))
        .subscription
    )

  @Test def anIntermediateStreamCannotBeBroadcast(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => {
        options("stream.Rates.intermediate" -> "true", "Stream.Rates.Broadcast" -> "true"); ()
      }
    )
    assertTrue(
      e.getMessage.startsWith(
        "Stream 'Rates' is both intermediate (option 'stream.Rates.intermediate')"
      ),
      e.getMessage
    )
  }

  @Test def aClassThatCannotBeLoadedFailsNamingTheOption(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => options("chooser.class" -> "com.example.Nope")
    )
    assertTrue(
      e.getMessage.contains("Option chooser.class: class 'com.example.Nope'"),
      e.getMessage
    )
  }

  @Test def optionsOfAUserChooserReachItInLowerCase(): Unit = {
    val example = "streamctl.testing.examples.StreamOrderChooser"
    val c = options("chooser.class" -> example, "Chooser.Option.ORDER" -> "tx.v2,Rates").chooser
    assertEquals(Some("tx.v2,Rates"), c.options.get("chooser.option.order"))
    val wrong = assertThrows(
      classOf[StreamctlException],
      () => options("chooser.class" -> example, "chooser.option.order" -> "Rates,fx")
    )
    assertTrue(
      wrong.getMessage.contains("'chooser.option.order' names fx, not in 'subscribe'"),
      wrong.getMessage
    )
  }

  @Test def optionsForAUserClassThatIsNotSetAreAnError(): Unit =
    Seq(
      "chooser.option.order" -> "chooser.class",
      "Grouper.Option.Size" -> "grouper.class"
    ).foreach { case (k, owner) =>
      val e = assertThrows(classOf[StreamctlException], () => options(k -> "1"))
      assertEquals(
        s"Option '$k' is for the class named by option '$owner', and '$owner' is not set",
        e.getMessage
      )
    }

  @Test def readerConfigCarriesTheChooser(): Unit =
    assertEquals(
      Set("Rates"),
      ReaderConfig(
        options("stream.Rates.bootstrap" -> "true"),
        realTime = false
      ).chooser.bootstrapStreams
    )

  @Test def aUserGrouperGetsItsOwnOptionsInLowerCase(): Unit = {
    val g = grouping(
      "grouper.class" -> classOf[streamctl.grouper.OwnOptionGrouper].getName,
      "Grouper.Option.PREFIX" -> "Shard"
    )
    assertEquals("Shard", g.grouper.asInstanceOf[streamctl.grouper.OptionsGrouper].prefix)
  }

  @Test def groupingDefaults(): Unit = {
    val g = grouping()
    assertEquals("partition", g.grouperName)
    assertEquals("modulo", g.expansionName)
    assertEquals(Set.empty, g.broadcastStreams)
    assertEquals(10000L, g.checkIntervalMs)
  }

  @Test def groupingNamesAreCaseInsensitiveButStreamNamesAreNot(): Unit = {
    val g = grouping(
      "Grouper" -> "SSP",
      "STREAM.rates.Broadcast" -> "true",
      "Partition.Check.Interval" -> "1 min"
    )
    assertEquals("ssp", g.grouperName)
    assertEquals(Set("rates"), g.broadcastStreams)
    assertEquals(60000L, g.checkIntervalMs)
    fails("'stream.Rates.broadcast'", "'Rates'")("stream.Rates.broadcast" -> "true")
  }

  @Test def badGroupingValuesFailWhenTheSourceIsCreated(): Unit = {
    fails("grouper", "'bogus'", "partition, single, ssp")("grouper" -> "bogus")
    fails(
      "partition.expansion.algorithm",
      "com.example.Nope",
      "not found"
    )("partition.expansion.algorithm" -> "com.example.Nope")
    fails("grouper.class", "com.example.Nope")("grouper.class" -> "com.example.Nope")
    fails("stream.rates.broadcast", "'yes'")("stream.rates.broadcast" -> "yes")
    fails("'partition.check.interval'", "'10'", "'10s'")("partition.check.interval" -> "10")
  }

  @Test def hostAffinityIsABoolean(): Unit = {
    def opts(v: Option[String]) = SourceOptions(Map(
      "kafka.bootstrap.servers" -> "x:1",
      "streams" -> "s"
    ) ++ v.map("host.affinity" -> _))
    assertTrue(opts(None).hostAffinity)
    assertFalse(opts(Some("FALSE")).hostAffinity)
    val e = assertThrows(classOf[StreamctlException], () => opts(Some("yes")))
    assertTrue(e.getMessage.contains("host.affinity"), e.getMessage)
  }

  @Test def maxRecordsMustBePositive(): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => options("max.records.per.batch" -> "0"))
    assertTrue(e.getMessage.contains("max.records.per.batch"), e.getMessage)
  }

  @Test def aMinimumAboveTheBudgetIsRefusedNamingBoth(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => options("minOffsetsPerTrigger" -> "20", "maxOffsetsPerTrigger" -> "15")
    )
    assertEquals(
      "Option 'minOffsetsPerTrigger' (20) is higher than option 'maxOffsetsPerTrigger' (15): " +
        "a batch would wait for more records than it may read",
      e.getMessage
    )
    assertEquals(
      Some(15L),
      options("minOffsetsPerTrigger" -> "15", "maxOffsetsPerTrigger" -> "15").maxRecordsPerBatch
    )
  }

  @Test def anUnknownOptionNamesTheNearestKnownOne(): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => options("max.records.per.bach" -> "10"))
    assertTrue(
      e.getMessage.startsWith("Unknown option 'max.records.per.bach' for format(\"streamctl\"). " +
        "Did you mean 'max.records.per.batch'? Known options: "),
      e.getMessage
    )
    val property =
      assertThrows(classOf[StreamctlException], () => options("stream.Rates.bootstrp" -> "true"))
    assertTrue(
      property.getMessage.contains(
        "unknown stream property 'bootstrp' (did you mean 'bootstrap'?)"
      ),
      property.getMessage
    )
  }

  @Test def jobNameIsNoLongerAnOption(): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => options("job.name" -> "nightly"))
    assertTrue(e.getMessage.startsWith("Unknown option 'job.name'"), e.getMessage)
  }

  @Test def startpointResolversAreMadeWhenTheSourceIs(): Unit = {
    val example = "streamctl.testing.examples.RewindResolver"
    assertEquals(
      Seq("rewind"),
      options("startpoint.resolvers" -> example).startpointResolvers.map(_.kind)
    )
    val e = assertThrows(
      classOf[StreamctlException],
      () => options("startpoint.resolvers" -> s"$example,com.example.Nope")
    )
    assertTrue(
      e.getMessage.contains("Option startpoint.resolvers: class 'com.example.Nope'"),
      e.getMessage
    )
  }
}
