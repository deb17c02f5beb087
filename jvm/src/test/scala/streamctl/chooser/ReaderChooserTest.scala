package streamctl.chooser

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.chooser.ChooserFixtures._

/** What a task's reader gets from ChooserFactory.forReader, and the single-SSP chooser. */
class ReaderChooserTest {
  private val a0 = ssp("a", 0); private val b0 = ssp("b", 0)
  private def config(kv: (String, String)*) = ChooserConfig.parse(kv.toMap, Seq("a", "b"))

  @Test def oneSspWithBuiltInsGetsTheSingleSlot(): Unit = {
    val options = config(
      "chooser" -> "time-aligned",
      "stream.a.priority" -> "3",
      "stream.a.bootstrap" -> "true",
      "chooser.batch.size" -> "4"
    )
    assertTrue(ChooserFactory.forReader(
      options,
      Map(a0 -> 0L),
      Map(a0 -> 10L)
    ).isInstanceOf[SingleSspChooser])
    assertTrue(ChooserFactory.forReader(
      config(),
      Map.empty,
      Map.empty
    ).isInstanceOf[SingleSspChooser])
  }

  @Test def severalSspsGetTheComposedChain(): Unit =
    assertTrue(ChooserFactory.forReader(
      config(),
      Map(a0 -> 0L, b0 -> 0L),
      Map.empty
    ).isInstanceOf[TaskChooser])

  @Test def aUserChooserIsCalledEvenForOneSsp(): Unit = {
    val c = ChooserFactory.forReader(
      config("chooser.class" -> classOf[StackUserChooser].getName),
      Map(a0 -> 0L),
      Map.empty
    )
    assertTrue(c.isInstanceOf[TaskChooser])
  }

  @Test def singleSlotHandsBackWhatWasOfferedOnce(): Unit = {
    val c = new SingleSspChooser
    assertNull(c.choose())
    val out = read(c, records(a0, 3))
    assertEquals(Seq("a-0@0", "a-0@1", "a-0@2"), sspOrder(out))
    assertNull(c.choose())
  }

  @Test def singleSlotRefusesASecondOutstandingEnvelope(): Unit = {
    val c = new SingleSspChooser
    c.update(env(a0, 0))
    val e = assertThrows(classOf[StreamctlException], () => c.update(env(a0, 1)))
    assertTrue(
      e.getMessage.contains("kafka/a/0") && e.getMessage.contains("offset 0"),
      e.getMessage
    )
  }
}
