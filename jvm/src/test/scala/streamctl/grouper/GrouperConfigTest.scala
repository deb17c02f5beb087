package streamctl.grouper

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.StreamctlException

class GrouperConfigTest {
  private val streams = Seq("orders", "eu.rates")

  private def parse(options: (String, String)*): GrouperConfig =
    GrouperConfig.parse(options.toMap, streams)

  private def error(options: (String, String)*): String =
    assertThrows(classOf[StreamctlException], () => { parse(options: _*); () }).getMessage

  @Test def defaults(): Unit = {
    val c = parse("stream.orders.priority" -> "3") // other parts' options are ignored
    assertEquals("partition", c.grouperName)
    assertTrue(c.grouper.isInstanceOf[GroupByPartition])
    assertEquals("modulo", c.expansionName)
    assertTrue(c.expansion.isInstanceOf[ModuloExpansion])
    assertEquals(Set.empty, c.broadcastStreams)
    assertEquals(streams, c.streams)
  }

  @Test def builtInsByName(): Unit = {
    assertTrue(parse("grouper" -> "ssp").grouper.isInstanceOf[GroupBySystemStreamPartition])
    assertTrue(parse("grouper" -> " Single ").grouper.isInstanceOf[AllSspToSingleTask])
    assertTrue(parse("grouper" -> "partition").grouper.isInstanceOf[GroupByPartition])
    assertTrue(
      parse("partition.expansion.algorithm" -> "modulo").expansion.isInstanceOf[ModuloExpansion]
    )
    // As grouper names: a built-in in any case, not a class 'Modulo' to look for.
    assertEquals("modulo", parse("partition.expansion.algorithm" -> "Modulo").expansionName)
  }

  @Test def unknownGrouperNamesOptionAndValue(): Unit = {
    val m = error("grouper" -> "bykey")
    assertTrue(m.contains("Option grouper: unknown grouper 'bykey'"), m)
    assertTrue(m.contains("partition, single, ssp"), m)
  }

  @Test def grouperAndGrouperClassTogetherIsAnError(): Unit =
    assertTrue(error(
      "grouper" -> "ssp",
      "grouper.class" -> classOf[ReversedGrouper].getName
    ).contains("both set"))

  @Test def userClasses(): Unit = {
    val c = parse(
      "grouper.class" -> classOf[ReversedGrouper].getName,
      "partition.expansion.algorithm" -> classOf[ToFirstPartition].getName
    )
    assertTrue(c.grouper.isInstanceOf[ReversedGrouper])
    assertEquals(classOf[ReversedGrouper].getName, c.grouperName)
    assertTrue(c.expansion.isInstanceOf[ToFirstPartition])
    assertEquals(classOf[ToFirstPartition].getName, c.expansionName)
  }

  @Test def userClassMayReadTheOptions(): Unit = {
    val g =
      parse("grouper.class" -> classOf[OptionsGrouper].getName, "my.prefix" -> "Shard").grouper
    assertEquals("Shard", g.asInstanceOf[OptionsGrouper].prefix)
  }

  @Test def userClassLoadingErrorsNameOptionAndClass(): Unit = {
    def check(option: String, cls: String, fragment: String): Unit = {
      val m = error(option -> cls)
      assertTrue(m.startsWith(s"Option $option: class '$cls'"), m)
      assertTrue(m.contains(fragment), m)
    }
    check("grouper.class", "com.example.Missing", "not found on the classpath")
    check(
      "grouper.class",
      classOf[NotAGrouper].getName,
      "does not implement streamctl.grouper.SystemStreamPartitionGrouper"
    )
    check("grouper.class", classOf[AbstractGrouper].getName, "is abstract")
    check("grouper.class", classOf[NeedsArgGrouper].getName, "no public constructor")
    check("grouper.class", classOf[ThrowingGrouper].getName, "boom in constructor")
    check("partition.expansion.algorithm", "com.example.Missing", "not found on the classpath")
    check(
      "partition.expansion.algorithm",
      classOf[ReversedGrouper].getName,
      "does not implement streamctl.grouper.PartitionExpansionAlgorithm"
    )
  }

  @Test def broadcastStreams(): Unit = {
    val c = parse("stream.eu.rates.broadcast" -> "TRUE", "stream.orders.broadcast" -> "false")
    assertEquals(Set("eu.rates"), c.broadcastStreams)
  }

  @Test def broadcastErrorsNameTheOption(): Unit = {
    val unknown = error("stream.ordres.broadcast" -> "true")
    assertTrue(unknown.contains("Option 'stream.ordres.broadcast' names stream 'ordres'"), unknown)
    val notBool = error("stream.orders.broadcast" -> "yes")
    assertTrue(
      notBool.contains("Option 'stream.orders.broadcast' must be true or false, not 'yes'"),
      notBool
    )
  }
}
