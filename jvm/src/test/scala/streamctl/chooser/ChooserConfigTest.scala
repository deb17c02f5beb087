package streamctl.chooser

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException

class ChooserConfigTest {
  private val streams = Seq("orders", "currency", "eu.orders-v2")

  private def parse(kv: (String, String)*) = ChooserConfig.parse(kv.toMap, streams)

  private def error(kv: (String, String)*): String =
    assertThrows(classOf[StreamctlException], () => parse(kv: _*)).getMessage

  @Test def defaults(): Unit = {
    assertEquals(
      ChooserConfig.default.copy(options = Map("unrelated" -> "x")),
      parse("unrelated" -> "x")
    )
    assertEquals(0, parse().priorityOf("orders"))
  }

  @Test def everyKey(): Unit = {
    val c = parse(
      "chooser" -> "time-aligned",
      "chooser.batch.size" -> " 8 ",
      "stream.orders.priority" -> "-2",
      "stream.currency.bootstrap" -> "TRUE",
      "stream.orders.bootstrap" -> "false",
      "max.records.per.batch" -> "5000"
    )
    assertTrue(c.timeAligned)
    assertEquals(Some(8), c.batchSize)
    assertEquals(-2, c.priorityOf("orders"))
    assertEquals(Set("currency"), c.bootstrapStreams)
    assertEquals(Some("x.Y"), parse("chooser.class" -> "x.Y").chooserClass)
  }

  @Test def streamNamesMayContainDots(): Unit =
    assertEquals(4, parse("stream.eu.orders-v2.priority" -> "4").priorityOf("eu.orders-v2"))

  @Test def nonIntegerPriority(): Unit = {
    val m = error("stream.orders.priority" -> "high")
    assertTrue(m.contains("stream.orders.priority") && m.contains("'high'"), m)
  }

  @Test def priorityOfAnUnknownStream(): Unit = {
    val m = error("stream.payments.priority" -> "1")
    assertTrue(m.contains("stream.payments.priority") && m.contains("'payments'"), m)
  }

  @Test def bootstrapOfAnUnknownStream(): Unit = {
    // Keys are case-sensitive, like stream names.
    val m = error("stream.Currency.bootstrap" -> "true")
    assertTrue(m.contains("stream.Currency.bootstrap") && m.contains("'Currency'"), m)
  }

  @Test def bootstrapMustBeABoolean(): Unit = {
    val m = error("stream.currency.bootstrap" -> "yes")
    assertTrue(m.contains("stream.currency.bootstrap") && m.contains("'yes'"), m)
  }

  @Test def batchSizeMustBeAPositiveInteger(): Unit = {
    Seq("0", "-3").foreach { v =>
      val m = error("chooser.batch.size" -> v)
      assertTrue(m.contains("chooser.batch.size") && m.contains(v), m)
    }
    assertTrue(error("chooser.batch.size" -> "many").contains("'many'"))
  }

  @Test def unknownChooserName(): Unit = {
    val m = error("chooser" -> "fastest")
    assertTrue(m.contains("'fastest'") && m.contains("round-robin, time-aligned"), m)
  }

  @Test def chooserClassAndTimeAlignedConflict(): Unit = {
    val m = error("chooser" -> "time-aligned", "chooser.class" -> "x.Y")
    assertTrue(m.contains("chooser.class=x.Y") && m.contains("chooser=time-aligned"), m)
  }
}
