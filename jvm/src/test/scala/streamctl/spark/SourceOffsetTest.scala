package streamctl.spark

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.{Json, StreamctlException}
import streamctl.grouper.TaskName
import streamctl.system.SSP

class SourceOffsetTest {
  private val a0 = SSP.kafka("a", 0)
  private val a1 = SSP.kafka("a", 1)
  private val t0 = TaskName("Partition 0")
  private val t1 = TaskName("Partition 1")

  @Test def jsonRoundTripsAndIsDeterministic(): Unit = {
    val o = SourceOffset(Map(t1 -> Map(a1 -> 7L), t0 -> Map(a0 -> 3L)), Map("x" -> Json.parse("""{"k":1}""", "t")),
      Map(t0 -> Map(a0 -> 1L)))
    val again = SourceOffset(Map(t0 -> Map(a0 -> 3L), t1 -> Map(a1 -> 7L)), o.state, o.starts)
    assertEquals(o.json, again.json)
    assertEquals(o, SourceOffset.parse(o.json))
    assertTrue(o.json.indexOf("Partition 0") < o.json.indexOf("Partition 1"))
  }

  @Test def newerVersionIsRefused(): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => SourceOffset.parse("""{"version":2,"tasks":{}}"""))
    assertTrue(e.getMessage.contains("version 2"))
  }

  @Test def broadcastSspKeepsOnePositionPerTask(): Unit = {
    val o = SourceOffset(Map(t0 -> Map(a0 -> 3L), t1 -> Map(a0 -> 9L)))
    assertEquals(Map(a0 -> 3L), o.minPositions)
  }

  @Test def planRecordsOnlyBeginningsThatDifferFromThePreviousOffset(): Unit = {
    val previous = SourceOffset(Map(t0 -> Map(a0 -> 10L), t1 -> Map(a1 -> 20L)))
    val plan = BatchPlan(previous).begin(t0, a0, 4L).begin(t1, a1, 20L).begin(t1, SSP.kafka("a", 3), 0L)
    val end = plan.end((_, _, b) => b + 5)
    assertEquals(Map(t0 -> Map(a0 -> 9L), t1 -> Map(a1 -> 25L, SSP.kafka("a", 3) -> 5L)), end.tasks)
    assertEquals(Map(t0 -> Map(a0 -> 4L), t1 -> Map(SSP.kafka("a", 3) -> 0L)), end.starts)
    assertEquals(Some(4L), end.startOf(previous, t0, a0))
    assertEquals(Some(20L), end.startOf(previous, t1, a1))
    // A replay plans from the logged offsets alone.
    assertEquals(end, SourceOffset.parse(end.json))
  }
}
