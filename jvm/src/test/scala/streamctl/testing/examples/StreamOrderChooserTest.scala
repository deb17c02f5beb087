package streamctl.testing.examples

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.chooser.{ChooserConfig, ChooserFactory}
import streamctl.chooser.ChooserFixtures._

class StreamOrderChooserTest {
  private val a0 = ssp("a", 0); private val b0 = ssp("b", 0); private val b1 = ssp("b", 1)

  @Test def streamsListedFirstGoFirstAndPartitionsTakeTurns(): Unit = {
    val options = Map("subscribe" -> "b, a", "chooser.class" -> classOf[StreamOrderChooser].getName)
    val c = ChooserFactory.forTask(
      ChooserConfig.parse(options, Seq("b", "a")),
      Map(a0 -> 0L, b0 -> 0L, b1 -> 0L),
      Map.empty
    )
    val out = read(c, records(a0, 2) ++ records(b0, 2) ++ records(b1, 2))
    assertEquals(Seq("b-0@0", "b-1@0", "b-0@1", "b-1@1", "a-0@0", "a-0@1"), sspOrder(out))
  }

  @Test def anSspOfAnotherStreamIsNamed(): Unit = {
    val c = new StreamOrderChooser(Map("subscribe" -> "a"))
    val e = assertThrows(classOf[StreamctlException], () => c.register(b0, 0L))
    assertTrue(e.getMessage.contains("'b'"), e.getMessage)
  }
}
