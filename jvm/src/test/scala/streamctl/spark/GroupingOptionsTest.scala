package streamctl.spark

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException

class GroupingOptionsTest {
  private val base = Map("kafka.bootstrap.servers" -> "127.0.0.1:1", "streams" -> "orders,rates")

  private def parse(extra: (String, String)*): GroupingOptions = SourceOptions(base ++ extra).grouping

  private def fails(fragments: String*)(extra: (String, String)*): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => { parse(extra: _*); () })
    fragments.foreach(f => assertTrue(e.getMessage.contains(f), e.getMessage))
  }

  @Test def aUserGrouperGetsItsOwnOptionsInLowerCase(): Unit = {
    val g = parse("grouper.class" -> classOf[streamctl.grouper.OwnOptionGrouper].getName, "Grouper.Option.PREFIX" -> "Shard")
    assertEquals("Shard", g.config.grouper.asInstanceOf[streamctl.grouper.OptionsGrouper].prefix)
  }

  @Test def defaults(): Unit = {
    val g = parse()
    assertEquals("partition", g.config.grouperName)
    assertEquals("modulo", g.config.expansionName)
    assertEquals(Set.empty, g.config.broadcastStreams)
    assertEquals(10000L, g.checkIntervalMs)
  }

  @Test def namesAreCaseInsensitiveButStreamNamesAreNot(): Unit = {
    val g = parse("Grouper" -> "SSP", "STREAM.rates.Broadcast" -> "true", "Partition.Check.Interval" -> "1 min")
    assertEquals("ssp", g.config.grouperName)
    assertEquals(Set("rates"), g.config.broadcastStreams)
    assertEquals(60000L, g.checkIntervalMs)
    fails("'stream.Rates.broadcast'", "'Rates'")("stream.Rates.broadcast" -> "true")
  }

  @Test def badValuesFailWhenTheSourceIsCreated(): Unit = {
    fails("grouper", "'bogus'", "partition, single, ssp")("grouper" -> "bogus")
    fails("partition.expansion.algorithm", "com.example.Nope", "not found")("partition.expansion.algorithm" -> "com.example.Nope")
    fails("grouper.class", "com.example.Nope")("grouper.class" -> "com.example.Nope")
    fails("stream.rates.broadcast", "'yes'")("stream.rates.broadcast" -> "yes")
    fails("'partition.check.interval'", "'10'", "'10s'")("partition.check.interval" -> "10")
  }

  @Test def durations(): Unit = {
    def ms(v: String) = DurationOption.millis("x", v)
    assertEquals(10000L, ms("10s"))
    assertEquals(500L, ms("500ms"))
    assertEquals(1500L, ms("1.5 s"))
    assertEquals(120000L, ms("2 minutes"))
    assertEquals(3600000L, ms("1h"))
    assertEquals(0L, ms("0s"))
    for (bad <- Seq("10", "", "-1s", "ten s", "5 fortnights", "9999999999999999h"))
      assertThrows(classOf[StreamctlException], () => { ms(bad); () }, bad)
  }
}
