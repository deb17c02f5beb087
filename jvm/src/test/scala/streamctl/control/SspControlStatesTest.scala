package streamctl.control

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.system.SSP

class SspControlStatesTest {
  private val a = SSP.kafka("mid", 0)
  private val b = SSP.kafka("mid", 1)
  private val c = SSP.kafka("other", 0)

  private def state(messages: ControlMessage*): SspControlState =
    messages.foldLeft(SspControlState.empty)((s, m) => s(m, a, 0).state)

  private val s1 = state(WatermarkMessage("p0", 2, 10), EndOfStreamMessage("p1", 2))
  private val s2 = state(WatermarkMessage("p0", 2, 15), WatermarkMessage("p1", 2, 3))
  private val s3 = state(EndOfStreamMessage("p0", 2))

  @Test def mergeIsOrderIndependentAndIdempotent(): Unit = {
    val maps = Seq(
      Map(a -> s1, b -> s2),
      Map(a -> s2),
      Map(a -> s3, c -> s1),
      Map(b -> SspControlState.empty)
    )
    val reference = SspControlStates.merge(maps)
    for (p <- maps.permutations) assertEquals(reference, SspControlStates.merge(p))
    assertEquals(reference, SspControlStates.merge(Seq(reference, reference)))
    assertEquals(reference, SspControlStates.merge(reference +: maps))
    // per producer: p0 ended (s3), p1 ended (s1), latest watermarks p0=15, p1=3
    assertTrue(reference(a).isEndOfStream)
    assertEquals(Map("p0" -> 15L, "p1" -> 3L), reference(a).producerWatermarks)
    assertEquals(s2, reference(b))
    assertEquals(Set(a, b, c), reference.keySet)
  }

  @Test def mergingTheSameReadFromTwoTasksChangesNothing(): Unit =
    assertEquals(Map(a -> s1), SspControlStates.merge(Seq(Map(a -> s1), Map(a -> s1))))

  @Test def mergeWithConflictingTaskCountsFails(): Unit = {
    val other = SspControlState.empty(EndOfStreamMessage("p0", 3), a, 0).state
    val e = assertThrows(
      classOf[StreamctlException],
      () => SspControlStates.merge(Seq(Map(a -> s1), Map(a -> other)))
    )
    assertTrue(e.getMessage.contains("stream 'mid' partition 0"), e.getMessage)
  }

  @Test def mergeWithTooManyProducersFails(): Unit = {
    val x = state(WatermarkMessage("p0", 2, 1), WatermarkMessage("p1", 2, 1))
    val y = SspControlState.empty(WatermarkMessage("p9", 2, 1), a, 0).state
    assertThrows(
      classOf[StreamctlException],
      () => SspControlStates.merge(Seq(Map(a -> x), Map(a -> y)))
    )
  }

  @Test def theWatermarkIsTheMinimumOverSsps(): Unit = {
    val w20 = state(WatermarkMessage("p0", 1, 20))
    val w7 = state(WatermarkMessage("p0", 1, 7))
    assertEquals(Some(7L), WatermarkSummary.of(Seq(w20, w7)).watermark)
    assertEquals(
      None,
      WatermarkSummary.of(Seq(w20, SspControlState.empty)).watermark,
      "one SSP not yet defined"
    )
    assertEquals(None, WatermarkSummary.of(Nil).watermark, "no intermediate SSPs: no watermark")
  }

  @Test def endedSspsDoNotHoldTheTaskWatermarkBack(): Unit = {
    val ended5 = state(WatermarkMessage("p0", 1, 5), EndOfStreamMessage("p0", 1))
    val live20 = state(WatermarkMessage("p0", 1, 20))
    val endedNoWm = state(EndOfStreamMessage("p0", 1))
    assertEquals(Some(20L), WatermarkSummary.of(Seq(ended5, live20, endedNoWm)).watermark)
    val ended30 = state(WatermarkMessage("p0", 1, 30), EndOfStreamMessage("p0", 1))
    assertEquals(
      Some(30L),
      WatermarkSummary.of(Seq(ended5, ended30)).watermark,
      "all ended: the highest, never backwards"
    )
  }

  @Test def allEndOfStream(): Unit = {
    def all(states: SspControlStates.States) =
      SspControlStates.allEndOfStream(states.keys, states.get)
    assertFalse(all(Map.empty))
    assertFalse(all(Map(a -> s1)))
    val done = state(EndOfStreamMessage("p0", 1))
    assertTrue(all(Map(a -> done, b -> done)))
    assertFalse(
      SspControlStates.allEndOfStream(Seq(a, c), Map(a -> done).get),
      "an SSP without a state (a plain stream's) never ends"
    )
  }

  @Test def mapSerdeRoundTripsWithStableText(): Unit = {
    val m = Map(b -> s2, a -> s1, c -> SspControlState.empty)
    val text = SspControlStates.write(m)
    assertEquals(text, SspControlStates.write(Map(c -> SspControlState.empty, a -> s1, b -> s2)))
    assertTrue(text.startsWith("""{"kafka/mid/0":"""), text)
    assertEquals(m, SspControlStates.parse(text, "test"))
  }

  @Test def mapSerdeErrorsNameTheSsp(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => SspControlStates.parse("""{"kafka/mid/1":{"n":"x"}}""", "offset log batch 3")
    )
    assertTrue(
      e.getMessage.contains("offset log batch 3") && e.getMessage.contains("partition 1"),
      e.getMessage
    )
    val k = assertThrows(
      classOf[StreamctlException],
      () => SspControlStates.parse("""{"nope":{}}""", "batch 3")
    )
    assertTrue(k.getMessage.contains("batch 3") && k.getMessage.contains("'nope'"), k.getMessage)
  }
}
