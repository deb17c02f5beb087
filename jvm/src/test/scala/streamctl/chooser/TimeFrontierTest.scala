package streamctl.chooser

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.chooser.ChooserFixtures._
import streamctl.system.SSP

class TimeFrontierTest {

  /**
   * A fake broker: the record timestamps of each SSP, offsets from 0; answers like
   * offsets-for-times.
   */
  final class Broker(val data: Map[SSP, IndexedSeq[Long]]) {
    var calls = 0
    val offsetForTime: (SSP, Long) => Long = (s, t) => {
      assertTrue(t >= 0, s"asked for negative time $t (Kafka reads it as latest/earliest)")
      calls += 1
      val i = data(s).indexWhere(_ >= t)
      if (i < 0) -1L else i.toLong
    }
    def plan(
        budget: Long,
        starts: Map[SSP, Long] = Map.empty,
        knownStartTs: Boolean = true
    ): (Map[SSP, Long], Option[Long]) = {
      val ssps = data.keys.toIndexedSeq.sorted
      val st = ssps.map(s => starts.getOrElse(s, 0L)).toArray
      val ts = ssps.indices.map(i =>
        if (knownStartTs && st(i) < data(ssps(i)).size) data(ssps(i))(st(i).toInt) else -1L
      ).toArray
      val r = TimeFrontier.plan(
        ssps,
        st,
        ssps.map(data(_).size.toLong).toArray,
        ts,
        budget,
        offsetForTime
      )
      (ssps.zip(r.ends).toMap, r.frontier)
    }
  }

  private val fast = ssp("fast", 0); private val slow = ssp("slow", 0)
  // fast: one record per ms from t=1000; slow: one record per 10 ms from t=1000.
  private val broker = new Broker(Map(
    fast -> (0 until 1000).map(1000L + _),
    slow -> (0 until 100).map(1000L + 10L * _)
  ))

  @Test def aFastStreamDoesNotRunAhead(): Unit = {
    val (ends, frontier) = broker.plan(budget = 110)
    // 100 ms of time holds 100 fast + 10 slow records.
    assertEquals(Some(1100L), frontier)
    assertEquals(100L, ends(fast))
    assertEquals(10L, ends(slow))
  }

  @Test def theFrontierCarriesOverBatches(): Unit = {
    val (first, _) = broker.plan(budget = 55)
    val (second, f2) = broker.plan(budget = 55, starts = first)
    assertEquals(Some(1100L), f2)
    assertEquals(110L, second.values.sum)
  }

  @Test def everythingFitsWithoutAskingTheBroker(): Unit = {
    val b = new Broker(broker.data)
    val (ends, frontier) = b.plan(budget = 5000)
    assertEquals(Map(fast -> 1000L, slow -> 100L), ends)
    assertEquals(None, frontier)
    assertEquals(0, b.calls)
  }

  @Test def progressWhenOneTimestampHoldsMoreThanTheBudget(): Unit = {
    val b = new Broker(Map(fast -> IndexedSeq.fill(50)(7L), slow -> IndexedSeq.fill(50)(7L)))
    val (ends, frontier) = b.plan(budget = 9)
    assertEquals(Some(7L), frontier)
    assertEquals(Map(fast -> 5L, slow -> 4L), ends) // water-filled, remainder to the first SSP
  }

  @Test def recordsWithoutTimestampGoFirstAndTheBrokerIsNeverAskedANegativeTime(): Unit = {
    val b = new Broker(Map(
      fast -> (IndexedSeq.fill(30)(-1L) ++ (0 until 10).map(100L + _)),
      slow -> (0 until 10).map(100L + _)
    ))
    val (ends, frontier) = b.plan(budget = 20, knownStartTs = false)
    assertEquals(None, frontier)
    assertEquals(Map(fast -> 20L, slow -> 0L), ends)
    // Once they are read, alignment resumes.
    val (ends2, f2) = b.plan(budget = 10, starts = Map(fast -> 30L))
    assertEquals(Some(105L), f2)
    assertEquals(Map(fast -> 35L, slow -> 5L), ends2)
  }

  @Test def unknownStartTimestampsGiveTheSameAnswer(): Unit = {
    Seq(1L, 37L, 110L, 600L).foreach { budget =>
      assertEquals(
        broker.plan(budget),
        broker.plan(budget, knownStartTs = false),
        s"budget $budget"
      )
    }
  }

  @Test def aWrongGuessIsCorrectedDownwards(): Unit = {
    // slow's start time is known (5000) but fast has records long before it.
    val b = new Broker(Map(fast -> (0 until 100).map(100L + _), slow -> IndexedSeq(5000L, 5001L)))
    val ssps = IndexedSeq(fast, slow)
    val r = TimeFrontier.plan(
      ssps,
      Array(0L, 0L),
      Array(100L, 2L),
      Array(-1L, 5000L),
      10,
      b.offsetForTime
    )
    assertEquals(Seq(10L, 0L), r.ends.toSeq)
    assertEquals(Some(110L), r.frontier)
  }

  @Test def probesStayLogarithmic(): Unit = {
    val b = new Broker(broker.data)
    val r = TimeFrontier.plan(
      IndexedSeq(fast, slow),
      Array(0L, 0L),
      Array(1000L, 100L),
      Array(1000L, 1000L),
      330,
      b.offsetForTime
    )
    assertTrue(r.probes <= 25, s"${r.probes} probes")
    val unknown = TimeFrontier.plan(
      IndexedSeq(fast, slow),
      Array(0L, 0L),
      Array(1000L, 100L),
      Array(-1L, -1L),
      330,
      b.offsetForTime
    )
    assertTrue(unknown.probes <= 90, s"${unknown.probes} probes without start timestamps")
  }
}
