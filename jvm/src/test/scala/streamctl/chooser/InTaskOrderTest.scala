package streamctl.chooser

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.chooser.ChooserFixtures._

/** Order inside a task for round-robin, batching, priority tiers and time alignment. */
class InTaskOrderTest {
  private val a0 = ssp("a", 0); private val a1 = ssp("a", 1); private val b0 = ssp("b", 0)

  @Test def roundRobinChoosesInUpdateOrder(): Unit = {
    val c = started(new RoundRobinChooser, a0, a1, b0)
    val (x, y, z) = (env(b0, 0), env(a0, 0), env(a1, 0))
    c.update(x); c.update(y); c.update(z)
    assertSame(x, c.choose()); assertSame(y, c.choose()); assertSame(z, c.choose())
    assertNull(c.choose())
  }

  @Test def roundRobinVisitsSspsInTurn(): Unit = {
    val out = read(started(new RoundRobinChooser, a0, b0), records(a0, 3) ++ records(b0, 3))
    assertEquals("a b a b a b", streams(out))
  }

  @Test def batchingKeepsOneSspUpToN(): Unit = {
    val out = read(
      started(new BatchingChooser(new RoundRobinChooser, 3), a0, b0),
      records(a0, 7) ++ records(b0, 5)
    )
    assertEquals("a a a b b b a a a b b a", streams(out))
  }

  @Test def batchingHandsOffWhenItsSspHasNoEnvelope(): Unit = {
    val c = started(new BatchingChooser(new RoundRobinChooser, 10), a0, b0)
    c.update(env(a0, 0)); c.update(env(b0, 0))
    assertEquals(a0, c.choose().ssp)
    // a0's next record is not fetched yet: the streak must not block b0.
    assertEquals(b0, c.choose().ssp)
    c.update(env(a0, 1))
    assertEquals(a0, c.choose().ssp)
    assertNull(c.choose())
  }

  @Test def batchingRestartsItsStreakWhenWrappedPicksTheSameSspAgain(): Unit = {
    val c = started(new BatchingChooser(new RoundRobinChooser, 2), a0, b0)
    c.update(env(a0, 0)); assertEquals(a0, c.choose().ssp)
    c.update(env(a0, 1)); assertEquals(a0, c.choose().ssp)
    // The streak of 2 is over; only a0 has data, so round-robin picks it again: a new streak.
    c.update(env(a0, 2)); assertEquals(a0, c.choose().ssp)
    // b0 is offered first: round-robin alone would choose it, the restarted streak keeps a0.
    c.update(env(b0, 0)); c.update(env(a0, 3))
    assertEquals(a0, c.choose().ssp)
    assertEquals(b0, c.choose().ssp)
    assertNull(c.choose())
  }

  @Test def batchSizeMustBePositive(): Unit = {
    val e =
      assertThrows(classOf[StreamctlException], () => new BatchingChooser(new RoundRobinChooser, 0))
    assertTrue(e.getMessage.contains("chooser.batch.size"), e.getMessage)
  }

  private def tiered() = started(
    new TieredPriorityChooser(s => if (s.stream == "b") 5 else 0, () => new RoundRobinChooser),
    a0,
    a1,
    b0
  )

  @Test def higherTierFirstRoundRobinWithinTier(): Unit = {
    val out = read(tiered(), records(a0, 2) ++ records(a1, 2) ++ records(b0, 3))
    assertEquals(Seq("b-0@0", "b-0@1", "b-0@2", "a-0@0", "a-1@0", "a-0@1", "a-1@1"), sspOrder(out))
  }

  @Test def lowTierStarvesWhileHighTierHasData(): Unit = {
    val c = tiered()
    c.update(env(a0, 0)); c.update(env(b0, 0))
    // The high tier keeps receiving records as fast as it is read: the low tier waits.
    (1 to 100).foreach { o =>
      assertEquals(b0, c.choose().ssp)
      c.update(env(b0, o))
    }
    assertEquals(b0, c.choose().ssp)
    // High tier dry: the low tier finally goes.
    assertEquals(a0, c.choose().ssp)
    assertNull(c.choose())
  }

  @Test def negativePrioritiesSortBelowDefault(): Unit = {
    val c = started(
      new TieredPriorityChooser(s => if (s.stream == "b") -1 else 0, () => new RoundRobinChooser),
      a0,
      b0
    )
    c.update(env(b0, 0)); c.update(env(a0, 0))
    assertEquals(a0, c.choose().ssp)
  }

  @Test def unregisteredSspIsNamed(): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => tiered().update(env(ssp("zzz", 9), 0)))
    assertTrue(e.getMessage.contains("kafka/zzz/9"), e.getMessage)
  }

  @Test def timeAlignedSmallestTimestampFirst(): Unit = {
    val c = started(new TimeAlignedChooser, a0, a1, b0)
    c.update(env(a0, 0, ts = 30)); c.update(env(b0, 0, ts = 10)); c.update(env(a1, 0, ts = 20))
    assertEquals(Seq(10L, 20L, 30L), Seq(c.choose(), c.choose(), c.choose()).map(_.timestamp))
    assertNull(c.choose())
  }

  @Test def timeAlignedTiesGoInSspOrderWhateverTheRegistrationOrder(): Unit = {
    val c = started(new TimeAlignedChooser, b0, a1, a0)
    c.update(env(b0, 0, ts = 7)); c.update(env(a1, 0, ts = 7)); c.update(env(a0, 0, ts = 7))
    assertEquals(Seq(a0, a1, b0), Seq(c.choose(), c.choose(), c.choose()).map(_.ssp))
  }

  @Test def timeAlignedMergesSortedStreamsIntoOneSortedStream(): Unit = {
    val rnd = new scala.util.Random(42)
    val ssps = (0 until 16).map(ssp("s", _))
    val input = ssps.flatMap { s =>
      var t = 0L
      records(s, 200, ts = _ => { t += rnd.nextInt(20); t })
    }
    val out = read(started(new TimeAlignedChooser, ssps: _*), input)
    assertEquals(input.size, out.size)
    val keys = out.map(e => (e.timestamp, e.ssp.partition))
    assertEquals(keys.sorted, keys)
  }

  @Test def timeAlignedRecordsWithoutTimestampGoFirst(): Unit = {
    // Documented fallback: -1 counts as older than any time, never blocks, never errors.
    val out = read(
      started(new TimeAlignedChooser, a0, b0),
      records(a0, 3, ts = o => 100 + o) ++ records(b0, 2, ts = _ => -1L) ++ records(
        b0,
        2,
        from = 2,
        ts = o => 50 + o
      )
    )
    assertEquals(Seq("b-0@0", "b-0@1", "b-0@2", "b-0@3", "a-0@0", "a-0@1", "a-0@2"), sspOrder(out))
  }

  @Test def timeAlignedRejectsASecondOutstandingEnvelope(): Unit = {
    val c = started(new TimeAlignedChooser, a0)
    c.update(env(a0, 0, 1))
    val e = assertThrows(classOf[StreamctlException], () => c.update(env(a0, 1, 2)))
    assertTrue(
      e.getMessage.contains("kafka/a/0") && e.getMessage.contains("offset 1"),
      e.getMessage
    )
  }
}
