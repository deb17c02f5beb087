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

  @Test def aProducerThatEndedBeforeAPartitionWasAddedHasEndedThere(): Unit = {
    def mid(p: Int) = SSP.kafka("mid", p)
    // "a" ended when mid had 2 partitions; "b" ended after it grew to 3; mid then grew to 4.
    val ended = Map(
      mid(0) -> state(EndOfStreamMessage("a", 2, Some(2)), EndOfStreamMessage("b", 2, Some(3))),
      mid(1) -> state(EndOfStreamMessage("a", 2, Some(2)))
    )
    val heardFromB = state(WatermarkMessage("b", 2, 40))
    val grown = SspControlStates.withEndsBeforeGrowth(
      ended + (mid(2) -> heardFromB) + (c -> state(WatermarkMessage("a", 2, 5))),
      (0 to 3).map(mid) :+ c
    )
    assertFalse(grown(mid(1)).isEndOfStream, "b's end-of-stream on partition 1 is on its way")
    assertEquals(Set("a"), grown(mid(2)).endOfStreamProducers)
    assertEquals(Some(40L), grown(mid(2)).watermark, "b alone holds partition 2 back now")
    assertTrue(grown(mid(3)).isEndOfStream, "nobody wrote partition 3 or ever will")
    assertEquals(Map("a" -> 2, "b" -> 3), grown(mid(3)).endedWithin)
    assertEquals(state(WatermarkMessage("a", 2, 5)), grown(c), "another stream is another matter")
    assertTrue(SspControlStates.allEndOfStream(Seq(mid(3)), grown.get))
    assertEquals(grown, SspControlStates.withEndsBeforeGrowth(grown, (0 to 3).map(mid)))
    // A partition that said something else about a producer keeps what it said.
    val said = Map(mid(0) -> state(EndOfStreamMessage("a", 2, Some(2))), mid(2) -> heardFromB)
    assertEquals(
      heardFromB.producerWatermarks,
      SspControlStates.withEndsBeforeGrowth(said, Seq(mid(2)))(mid(2)).producerWatermarks
    )
  }

  @Test def anEndOfStreamThatDidNotSayItsPartitionCountEndsNothingElse(): Unit = {
    val old = Map(a -> state(EndOfStreamMessage("p0", 1)))
    val mid3 = SSP.kafka("mid", 3)
    assertEquals(old, SspControlStates.withEndsBeforeGrowth(old, Seq(a, mid3)))
  }

  @Test def aGrownPartitionWhoseProducersSayAnotherCountIsRefusedNamingIt(): Unit = {
    val mid2 = SSP.kafka("mid", 2)
    val states = Map(
      a -> state(EndOfStreamMessage("p0", 2, Some(1))),
      mid2 -> state(WatermarkMessage("p1", 3, 7))
    )
    val e = assertThrows(
      classOf[StreamctlException],
      () => SspControlStates.withEndsBeforeGrowth(states, Seq(mid2))
    )
    assertTrue(e.getMessage.contains("stream 'mid' partition 2"), e.getMessage)
  }

  @Test def aGrownPartitionThatWouldNameMoreProducersThanTheCountIsRefusedNamingIt(): Unit = {
    val mid2 = SSP.kafka("mid", 2)
    val states = Map(
      a -> state(EndOfStreamMessage("p0", 2, Some(1))),
      mid2 -> state(WatermarkMessage("p1", 2, 7), WatermarkMessage("p2", 2, 8))
    )
    val e = assertThrows(
      classOf[StreamctlException],
      () => SspControlStates.withEndsBeforeGrowth(states, Seq(mid2))
    )
    assertTrue(
      e.getMessage.contains("stream 'mid' partition 2") && e.getMessage.contains("p0, p1, p2") &&
        e.getMessage.contains("taskCount is 2"),
      e.getMessage
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
