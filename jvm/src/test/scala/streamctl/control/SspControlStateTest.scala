package streamctl.control

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.system.SSP

class SspControlStateTest {
  private val ssp = SSP.kafka("mid", 1)

  private def eos(p: String, n: Int = 3) = EndOfStreamMessage(p, n)
  private def wm(p: String, ts: Long, n: Int = 3) = WatermarkMessage(p, n, ts)
  private def idle(p: String, ts: Option[Long] = None, n: Int = 2) = IdleMessage(p, n, ts)
  private def active(p: String, ts: Option[Long] = None, n: Int = 2) = ActiveMessage(p, n, ts)

  /** Applies messages from `offset` on, one offset each. */
  private def runFrom(
      start: SspControlState,
      offset: Long,
      messages: ControlMessage*
  ): SspControlState =
    messages.zipWithIndex.foldLeft(start) { case (s, (m, i)) => s(m, ssp, offset + i).state }

  /** Applies messages at offsets 0, 1, 2, ... */
  private def run(start: SspControlState, messages: ControlMessage*): SspControlState =
    messages.zipWithIndex.foldLeft(start) { case (s, (m, i)) => s(m, ssp, i.toLong).state }

  private def restart(s: SspControlState): SspControlState = SspControlState.parse(s.json, "test")

  private def assertFailsAt(offset: Long, expected: String*)(body: => Any): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => { body; () })
    for (part <- Seq("stream 'mid'", "partition 1", s"offset $offset") ++ expected)
      assertTrue(e.getMessage.contains(part), s"'$part' missing from: ${e.getMessage}")
  }

  @Test def endOfStreamSurvivesARestartAndCompletesWithTheLastProducer(): Unit = {
    val two = run(SspControlState.empty, eos("p0"), eos("p1"))
    assertFalse(two.isEndOfStream)
    assertEquals(2, two.endOfStreamCount)
    val restarted = restart(two)
    assertEquals(two, restarted)
    assertFalse(restarted.isEndOfStream)
    val done = restarted(eos("p2"), ssp, 10).state
    assertTrue(done.isEndOfStream)
    assertEquals(3, done.producers)
  }

  @Test def repeatedEndOfStreamFromOneProducerCountsOnce(): Unit = {
    val s = run(SspControlState.empty, eos("p0"), eos("p0"), eos("p1"), eos("p1"))
    assertEquals(2, s.endOfStreamCount)
    assertFalse(s.isEndOfStream)
  }

  @Test def watermarkIsTheMinimumOverProducers(): Unit = {
    val s = run(SspControlState.empty, wm("p1", 10), wm("p2", 20), wm("p3", 5))
    assertEquals(Some(5L), s.watermark)
    val moved = s(wm("p3", 30), ssp, 3)
    assertEquals(Some(10L), moved.state.watermark)
    assertTrue(moved.watermarkAdvanced)
  }

  @Test def watermarkIsUndefinedUntilAllProducersReported(): Unit = {
    val a = SspControlState.empty(wm("p1", 10), ssp, 0)
    assertEquals(None, a.state.watermark)
    assertFalse(a.watermarkAdvanced)
    val b = a.state(wm("p2", 20), ssp, 1)
    assertEquals(None, b.state.watermark)
    assertFalse(b.watermarkAdvanced)
    val c = b.state(wm("p3", 5), ssp, 2)
    assertEquals(Some(5L), c.state.watermark)
    assertTrue(c.watermarkAdvanced, "becoming defined is an advance")
  }

  @Test def watermarkNeverMovesBackwardsAndIsEmittedOnlyOnAdvance(): Unit = {
    val s = run(SspControlState.empty, wm("p1", 10), wm("p2", 20), wm("p3", 5))
    val back = s(wm("p3", 1), ssp, 3)
    assertFalse(back.watermarkAdvanced)
    assertEquals(Some(5L), back.state.watermark)
    assertEquals(5L, back.state.producerWatermarks("p3"), "an older producer watermark is ignored")
    assertSame(s, back.state)
    val same = s(wm("p3", 5), ssp, 4)
    assertFalse(same.watermarkAdvanced)
    val otherMoves = s(wm("p1", 15), ssp, 5) // min is still p3's 5
    assertFalse(otherMoves.watermarkAdvanced)
    assertEquals(Some(5L), otherMoves.state.watermark)
  }

  @Test def anEndedProducerNoLongerHoldsTheWatermarkBack(): Unit = {
    val s = run(SspControlState.empty, wm("p1", 10), wm("p2", 20), wm("p3", 5))
    val ended = s(eos("p3"), ssp, 3)
    assertTrue(ended.watermarkAdvanced)
    assertEquals(Some(10L), ended.state.watermark)
    val late = ended.state(wm("p3", 1000), ssp, 4)
    assertSame(ended.state, late.state, "a watermark after the producer's end-of-stream is ignored")
  }

  @Test def aProducerThatEndsWithoutAWatermarkCountsAsReported(): Unit = {
    val s = run(SspControlState.empty, wm("p1", 10), wm("p2", 20), eos("p3"))
    assertEquals(Some(10L), s.watermark)
  }

  @Test def whenAllProducersEndedTheWatermarkIsTheHighestReported(): Unit = {
    val s = run(
      SspControlState.empty,
      wm("p1", 10),
      wm("p2", 20),
      wm("p3", 5),
      eos("p1"),
      eos("p2"),
      eos("p3")
    )
    assertTrue(s.isEndOfStream)
    assertEquals(Some(20L), s.watermark)
    assertEquals(None, run(SspControlState.empty, eos("p1"), eos("p2"), eos("p3")).watermark)
  }

  @Test def taskCountChangingForOneProducerFails(): Unit = {
    val s = run(SspControlState.empty, wm("p1", 10))
    assertFailsAt(7, "taskCount 4", "said 3")(s(wm("p1", 11, n = 4), ssp, 7))
  }

  @Test def taskCountDifferingBetweenProducersFails(): Unit = {
    val s = run(SspControlState.empty, eos("p1", n = 2))
    assertFailsAt(8, "'p2'", "taskCount 3", "said 2")(s(eos("p2", n = 3), ssp, 8))
  }

  @Test def moreProducerNamesThanTaskCountFails(): Unit = {
    val s = run(SspControlState.empty, wm("a", 1, 2), wm("b", 1, 2))
    assertFailsAt(9, "'c'", "a, b")(s(wm("c", 1, 2), ssp, 9))
  }

  @Test def dataAfterEndOfStreamFails(): Unit = {
    val partial = run(SspControlState.empty, eos("p0"), eos("p1"))
    partial.checkData(ssp, 5) // undetectable per producer: data carries no producer name
    val done = partial(eos("p2"), ssp, 6).state
    assertFailsAt(7, "after end-of-stream", "p0, p1, p2")(done.checkData(ssp, 7))
  }

  @Test def serdeIsCompactAndRoundTrips(): Unit = {
    assertEquals("{}", SspControlState.empty.json)
    assertEquals(SspControlState.empty, restart(SspControlState.empty))
    val s = run(SspControlState.empty, wm("p1", 10), eos("p2"))
    assertEquals("""{"n":3,"eos":["p2"],"wm":{"p1":10}}""", s.json)
    assertEquals(s, restart(s))
    assertEquals(s.hashCode, restart(s).hashCode)
    val counted = run(s, EndOfStreamMessage("p1", 3, Some(8)))
    assertEquals("""{"n":3,"eos":["p1","p2"],"wm":{"p1":10},"within":{"p1":8}}""", counted.json)
    assertEquals(counted, restart(counted))
    assertNotEquals(s.merge(counted, ssp).hashCode, s.hashCode)
    assertEquals(Map("p1" -> 8), s.merge(counted, ssp).endedWithin)
  }

  @Test def badSerializedStateFailsNamingTheOrigin(): Unit = {
    for (
      bad <- Seq(
        """{"n":3,"x":1}""",
        """{"n":0}""",
        """{"eos":["a"]}""",
        """{"n":1,"eos":["a","b"]}""",
        """{"n":2,"wm":{"a":"1"}}""",
        """{"n":2,"eos":"a"}""",
        """{"n":2,"eos":["a"],"within":{"b":2}}""",
        """{"n":2,"eos":["a"],"within":{"a":0}}""",
        "[]"
      )
    ) {
      val e = assertThrows(
        classOf[StreamctlException],
        () => SspControlState.parse(bad, "offset log batch 7")
      )
      assertTrue(e.getMessage.contains("offset log batch 7"), e.getMessage)
    }
  }

  @Test def producerCountsForMetrics(): Unit = {
    val s = run(SspControlState.empty, wm("p1", 10), wm("p2", 3), eos("p2"))
    assertEquals(3, s.producerCount)
    assertEquals(2, s.producers)
    assertEquals(1, s.endOfStreamCount)
    assertEquals(2, s.producerWatermarks.size)
  }

  @Test def anIdleProducerIsLeftOutOfTheMinimumUntilItSaysItIsBack(): Unit = {
    val two = run(SspControlState.empty, wm("p1", 10, 2), wm("p2", 20, 2))
    assertEquals(Some(10L), two.watermark)
    val quiet = two(idle("p1", Some(10)), ssp, 2)
    assertTrue(quiet.watermarkAdvanced)
    assertEquals(Some(20L), quiet.state.watermark, "only p2 is active")
    assertEquals(Set("p1"), quiet.state.idleProducers)
    val on = runFrom(quiet.state, 3, wm("p2", 30, 2))
    assertEquals(Some(30L), on.watermark, "the watermark follows the active producer")

    // p1 comes back behind p2: the SSP watermark stays where it was until p1 catches up.
    val back = on(active("p1", Some(10)), ssp, 4)
    assertFalse(back.watermarkAdvanced)
    assertEquals(Set(), back.state.idleProducers)
    assertEquals(Some(30L), back.state.watermark, "never backwards")
    assertEquals(Some(30L), back.state.floor)
    val catching = runFrom(back.state, 5, wm("p1", 25, 2))
    assertEquals(Some(30L), catching.watermark)
    val caughtUp = runFrom(catching, 6, wm("p1", 40, 2), wm("p2", 50, 2))
    assertEquals(Some(40L), caughtUp.watermark, "the minimum over both again")
    assertEquals(None, caughtUp.floor, "the floor is kept only while it is above the minimum")

    // A watermark message also brings an idle producer back.
    val again = runFrom(caughtUp, 8, idle("p2"), wm("p2", 45, 2))
    assertEquals(Set(), again.idleProducers)
    assertEquals(
      Some(50L),
      again.producerWatermarks.get("p2"),
      "an older watermark is still ignored"
    )
  }

  @Test def anIdleMessageCountsAsReportingAndAllIdleIsTheHighest(): Unit = {
    val s = run(SspControlState.empty, wm("p1", 10, 2), idle("p2"))
    assertEquals(Some(10L), s.watermark, "p2 reported idle without a watermark")
    assertFalse(s.isIdle)
    val both = runFrom(s, 2, idle("p1", Some(12)))
    assertTrue(both.isIdle)
    assertEquals(Some(12L), both.watermark, "nobody active: the highest watermark reported")
    val backBare = runFrom(both, 3, active("p2"))
    assertEquals(
      Some(12L),
      backBare.watermark,
      "p2 is back without a watermark: undefined, held at the floor"
    )
    assertEquals(
      None,
      run(SspControlState.empty, idle("p1"), idle("p2")).watermark,
      "no watermark at all"
    )
  }

  @Test def endOfStreamEndsAnIdleProducerAndNothingAfterItCounts(): Unit = {
    val s =
      run(SspControlState.empty, wm("p1", 10, 2), idle("p2", Some(5)), EndOfStreamMessage("p2", 2))
    assertEquals(Some(10L), s.watermark)
    assertEquals(Set(), s.idleProducers)
    assertSame(s, s(idle("p2", Some(99)), ssp, 9).state)
    assertSame(s, s(active("p2", Some(99)), ssp, 9).state)
    assertTrue(runFrom(s, 3, EndOfStreamMessage("p1", 2)).isEndOfStream)
  }

  @Test def idleStatusAndFloorSurviveARestartAndOldStatesStillRead(): Unit = {
    val s = run(
      SspControlState.empty,
      wm("p1", 10, 2),
      wm("p2", 20, 2),
      idle("p1", Some(10)),
      wm("p2", 30, 2),
      active("p1", Some(10))
    )
    assertEquals(
      """{"n":2,"wm":{"p1":10,"p2":30},"idle":{"p1":2},"active":{"p1":4},"floor":30}""",
      s.json
    )
    val restarted = restart(s)
    assertEquals(s, restarted)
    assertEquals(Some(30L), restarted.watermark)
    val idleAgain = runFrom(restarted, 5, idle("p1"))
    assertEquals(
      Set("p1"),
      restart(idleAgain).idleProducers,
      "idle again after coming back: the later offset wins"
    )
    // Written before idle producers existed.
    assertEquals(
      Some(10L),
      SspControlState.parse("""{"n":2,"eos":["p2"],"wm":{"p1":10}}""", "old offset").watermark
    )
    for (
      bad <- Seq(
        """{"n":2,"wm":{"p1":1},"active":{"p1":3}}""",
        """{"n":2,"idle":{"p1":"x"}}""",
        """{"n":1,"floor":"x"}"""
      )
    )
      assertThrows(
        classOf[StreamctlException],
        () => SspControlState.parse(bad, "offset log batch 7")
      )
  }

  @Test def mergingResultsThatExtendOneAnotherIsOrderIndependentAndNeverGoesBack(): Unit = {
    val prev = run(SspControlState.empty, wm("p1", 10, 2), wm("p2", 20, 2), idle("p1", Some(10)))
    val later = runFrom(prev, 3, wm("p2", 30, 2), active("p1", Some(10)))
    val latest = runFrom(later, 5, idle("p1"))
    val all = Seq(prev, later, latest)
    for (order <- all.permutations) {
      val merged = order.reduce(_.merge(_, ssp))
      assertEquals(latest, merged, s"order $order")
    }
    assertEquals(
      Some(30L),
      prev.merge(later, ssp).watermark,
      "p1 is back below p2: the floor holds"
    )
    assertEquals(later, later.merge(later, ssp))
  }
}
