package streamctl.config

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException

class OptionSetTest {
  private val Budget =
    OptionSpec.positiveLong("max.records.per.batch", "budget").alias("maxOffsetsPerTrigger")
  private val Exact =
    OptionSpec.bool("fail.on.data.loss", "fail", default = true).alias("failOnDataLoss")
  private val Priority = StreamProperty("priority", Parsers.int, "tier")
  private val Class = OptionSpec.className("chooser.class", "class")
  private val set = new OptionSet(
    "format(\"x\")",
    Seq(Budget, Exact, Class),
    Seq(Priority),
    Seq(UserClassOptions("chooser.option.", Class)),
    passThrough = Seq("kafka."),
    ignored = Set("path")
  )

  private def error(raw: (String, String)*): String =
    assertThrows(classOf[StreamctlException], () => { set.parse(raw.toMap); () }).getMessage

  @Test def durations(): Unit = {
    def ms(v: String) = Parsers.durationMs("x", v)
    assertEquals(10000L, ms("10s"))
    assertEquals(500L, ms("500ms"))
    assertEquals(1500L, ms("1.5 s"))
    assertEquals(120000L, ms("2 minutes"))
    assertEquals(3600000L, ms("1h"))
    assertEquals(0L, ms("0s"))
    assertEquals(86400000L, ms("1d"))
    assertEquals(60000L, ms("1m"))
    assertEquals(2L, ms("2000us"))
    for (bad <- Seq("10", "", "-1s", "ten s", "5 fortnights", "9999999999999999h"))
      assertThrows(
        classOf[StreamctlException],
        ((() => { ms(bad); () }): org.junit.jupiter.api.function.Executable),
        bad
      )
  }

  @Test def aDurationSharedWithSparksKafkaSourceReadsABareNumberAsMilliseconds(): Unit = {
    def ms(v: String) = Parsers.sparkDurationMs("maxTriggerDelay", v)
    assertEquals(5000L, ms("5000"))
    assertEquals(5000L, ms("5s"))
    for (bad <- Seq("1.5", "-5", "99999999999999999999"))
      assertThrows(
        classOf[StreamctlException],
        ((() => { ms(bad); () }): org.junit.jupiter.api.function.Executable),
        bad
      )
  }

  @Test def aliasesReadAsTheCanonicalName(): Unit = {
    val o = set.parse(Map("MaxOffsetsPerTrigger" -> "7", "failOnDataLoss" -> "false"))
    assertEquals(Some(7L), o.get(Budget))
    assertFalse(o(Exact))
    assertTrue(error(
      "maxOffsetsPerTrigger" -> "7",
      "max.records.per.batch" -> "8"
    ).contains("give it once"))
  }

  @Test def canonicalKeysKeepStreamNamesAndKafkaSettings(): Unit = {
    assertEquals("stream.Rates.priority", OptionSet.canonical("STREAM.Rates.Priority"))
    assertEquals("kafka.sasl.jaas.config", OptionSet.canonical("Kafka.sasl.jaas.config"))
    assertEquals("chooser.option.order", OptionSet.canonical("Chooser.Option.ORDER"))
    val o = set.parse(Map("Kafka.acks" -> "all", "stream.Rates.PRIORITY" -> "3", "path" -> "/x"))
    assertEquals(Map("acks" -> "all"), o.withPrefix("kafka."))
    assertEquals(Map("Rates" -> 3), o.streams(Priority, Seq("Rates")))
  }

  @Test def unknownOptionsSayWhatWasMeant(): Unit = {
    assertTrue(error("fail.on.data.los" -> "true").contains(
      "Unknown option 'fail.on.data.los' for format(\"x\"). " +
        "Did you mean 'fail.on.data.loss'? Known options: "
    ))
    val far = error("colour" -> "blue")
    assertTrue(far.startsWith("Unknown option 'colour' for format(\"x\"). Known options: "), far)
    /* A suggestion is spelled as declared, and the list of known options shows every name it may
     * suggest. */
    val alias = error("maxOffsetsPerTriger" -> "7")
    assertTrue(alias.contains("Did you mean 'maxOffsetsPerTrigger'?"), alias)
    assertTrue(alias.contains("max.records.per.batch (alias maxOffsetsPerTrigger)"), alias)
  }

  @Test def anOptionIsNamedAsTheUserWroteIt(): Unit = {
    assertEquals(
      "MaxOffsetsPerTrigger",
      set.parse(Map("MaxOffsetsPerTrigger" -> "7")).nameOf(Budget)
    )
    assertEquals("max.records.per.batch", set.parse(Map.empty).nameOf(Budget))
  }

  @Test def valuesAreCheckedWhenRead(): Unit = {
    val o = set.parse(Map("max.records.per.batch" -> "-3"))
    val e = assertThrows(classOf[StreamctlException], () => { o.get(Budget); () })
    assertEquals("Option 'max.records.per.batch' must be an integer > 0, not '-3'", e.getMessage)
    assertEquals(Some(true), Some(set.parse(Map.empty)(Exact)))
  }
}
