package streamctl.plan

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.chooser.ChooserState
import streamctl.planner.SourceStates
import streamctl.system.{SSP, TaskName}

class SourcePositionTest {
  private val a0 = SSP.kafka("a", 0)
  private val a1 = SSP.kafka("a", 1)
  private val t0 = TaskName("Partition 0")
  private val t1 = TaskName("Partition 1")

  @Test def jsonRoundTripsAndIsDeterministic(): Unit = {
    val o = SourcePosition(
      Map(t1 -> Map(a1 -> 7L), t0 -> Map(a0 -> 3L)),
      SourceState.empty.updated(ChooserState.Codec, ChooserState(Map.empty, Some(1L))),
      Map(t0 -> Map(a0 -> 1L))
    )
    val again = SourcePosition(Map(t0 -> Map(a0 -> 3L), t1 -> Map(a1 -> 7L)), o.state, o.starts)
    assertEquals(o.json, again.json)
    assertEquals(o, SourceStates.parse(o.json))
    assertTrue(o.json.contains(""""next":{"kafka/a":[3,7]}"""), o.json)
  }

  @Test def theDefaultGroupersTasksAreOneNumberPerPartition(): Unit = {
    val o = SourcePosition(Map(t0 -> Map(a0 -> 3L), t1 -> Map(a1 -> 7L)))
    assertEquals("""{"version":2,"next":{"kafka/a":[3,7]},"state":{}}""", o.json)
    assertEquals(o, SourceStates.parse(o.json))
  }

  @Test def aGrownStreamKeepsItsPartitionsOnTheirOriginsTasks(): Unit = {
    // a grew from 2 to 4 partitions: a-2 reads with a-0 in Partition 0, a-3 with a-1.
    val o = SourcePosition(Map(
      t0 -> Map(a0 -> 3L, SSP.kafka("a", 2) -> 1L, SSP.kafka("b", 0) -> 5L),
      t1 -> Map(a1 -> 7L, SSP.kafka("a", 3) -> 2L)
    ))
    assertEquals(
      """{"version":2,"modulo":{"kafka/a":2},"next":{"kafka/a":[3,7,1,2],"kafka/b":[5]},"state":{}}""",
      o.json
    )
    assertEquals(o, SourceStates.parse(o.json))
  }

  @Test def otherTasksAndBroadcastStreamsAreWrittenByTask(): Unit = {
    val single = TaskName("everything")
    val broadcast = SourcePosition(Map(
      t0 -> Map(a0 -> 3L, SSP.kafka("ref", 0) -> 4L),
      t1 -> Map(a1 -> 7L, SSP.kafka("ref", 0) -> 2L)
    ))
    assertEquals(
      """{"version":2,"next":{"kafka/a":[3,7]},"tasks":{"Partition 0":{"kafka/ref/0":4},""" +
        """"Partition 1":{"kafka/ref/0":2}},"state":{}}""",
      broadcast.json
    )
    assertEquals(broadcast, SourceStates.parse(broadcast.json))
    val other = SourcePosition(Map(single -> Map(a0 -> 3L, a1 -> 7L)))
    assertEquals(
      """{"version":2,"tasks":{"everything":{"kafka/a/0":3,"kafka/a/1":7}},"state":{}}""",
      other.json
    )
    assertEquals(other, SourceStates.parse(other.json))
  }

  @Test def aVersionOneOffsetStillReads(): Unit = {
    val v1 =
      """{"version":1,"tasks":{"Partition 0":{"kafka/a/0":3},"Partition 1":{"kafka/a/1":7}},"state":{}}"""
    assertEquals(
      SourcePosition(Map(t0 -> Map(a0 -> 3L), t1 -> Map(a1 -> 7L))),
      SourceStates.parse(v1)
    )
    assertThrows(
      classOf[StreamctlException],
      () => SourceStates.parse("""{"version":1,"state":{}}""")
    )
  }

  @Test def anOffsetGrowsByAFewBytesPerPartition(): Unit = {
    /* Written per batch: at 4,096 partitions it must stay near Spark's own (about 9 bytes a
     * partition). */
    val o = SourcePosition((0 until 4096).map(p =>
      TaskName(s"Partition $p") -> Map(SSP.kafka("orders", p) -> (100000L + p))
    ).toMap)
    assertTrue(o.json.length < 4096 * 8, s"${o.json.length} bytes")
    assertEquals(o, SourceStates.parse(o.json))
  }

  @Test def newerVersionIsRefused(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => SourceStates.parse("""{"version":3,"tasks":{}}""")
    )
    assertEquals(
      "the streamctl offset in the query checkpoint has version 3, newer than this streamctl reads (up to 2): upgrade streamctl",
      e.getMessage
    )
  }

  @Test def aVersionThatIsNoNumberIsRefusedNotReadAsZero(): Unit = {
    val m = assertThrows(
      classOf[StreamctlException],
      () => SourceStates.parse("""{"version":"x","tasks":{}}""")
    ).getMessage
    assertEquals(
      "The 'version' of the streamctl offset in the query checkpoint must be a whole number from 1, not \"x\"",
      m
    )
  }

  @Test def stateAStreamctlDoesNotKnowIsRefused(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => SourceStates.parse("""{"version":1,"tasks":{},"state":{"fancy":{}}}""")
    )
    assertTrue(
      e.getMessage.startsWith(
        "Unknown state 'fancy' in the streamctl offset in the query checkpoint"
      ),
      e.getMessage
    )
  }

  @Test def broadcastSspKeepsOnePositionPerTask(): Unit = {
    val o = SourcePosition(Map(t0 -> Map(a0 -> 3L), t1 -> Map(a0 -> 9L)))
    assertEquals(Map(a0 -> 3L), o.minPositions)
  }

  @Test def planRecordsOnlyBeginningsThatDifferFromThePreviousOffset(): Unit = {
    val previous = SourcePosition(Map(t0 -> Map(a0 -> 10L), t1 -> Map(a1 -> 20L)))
    val plan =
      BatchPlan(previous).begin(t0, a0, 4L).begin(t1, a1, 20L).begin(t1, SSP.kafka("a", 3), 0L)
    val end = plan.end((_, _, b) => b + 5)
    assertEquals(Map(t0 -> Map(a0 -> 9L), t1 -> Map(a1 -> 25L, SSP.kafka("a", 3) -> 5L)), end.tasks)
    assertEquals(Map(t0 -> Map(a0 -> 4L), t1 -> Map(SSP.kafka("a", 3) -> 0L)), end.starts)
    assertEquals(Some(4L), end.startOf(previous, t0, a0))
    assertEquals(Some(20L), end.startOf(previous, t1, a1))
    // A replay plans from the logged offsets alone.
    assertEquals(end, SourceStates.parse(end.json))
  }

  @Test def aBatchEndsWhereAdmissionSaysUnlessTheBrokerEndsBeforeItBegins(): Unit = {
    val previous = SourcePosition(Map(t0 -> Map(a0 -> 10L), t1 -> Map(a1 -> 20L)))
    val plan =
      BatchPlan(previous).copy(heads = Map(a0 -> 50L, a1 -> 15L), ends = Map(a0 -> 30L, a1 -> 25L))
    assertEquals(Map(t0 -> Map(a0 -> 30L), t1 -> Map(a1 -> 15L)), plan.end.tasks)
    assertEquals(Map(a0 -> 50L, a1 -> 15L), plan.reachable(None))
    assertEquals(
      Map(a0 -> 10L, a1 -> 15L),
      plan.copy(held = Set(a0)).reachable(None),
      "a held SSP ends where it begins"
    )
    assertEquals(
      Map(a0 -> 40L, a1 -> 0L),
      plan.reachable(Some(Map(a0 -> 40L))),
      "the AvailableNow target caps, and had nothing of a1"
    )
  }
}
