package streamctl.spark

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.plan.SourcePosition
import streamctl.planner.SourceStates
import streamctl.system.{SSP, TaskName}

class RecentOffsetsTest {
  private var parsed = 0
  private val offsets = new RecentOffsets(json => { parsed += 1; SourceStates.parse(json) })

  private def at(o: Long) =
    SourceOffset(SourcePosition(Map(TaskName("Partition 0") -> Map(SSP.kafka("orders", 0) -> o))))

  @Test def anOffsetSparkHandsBackAsTextIsTheOneTheSourceMade(): Unit = {
    val start = offsets.made(at(1))
    val end = offsets.made(at(2))
    assertSame(start, offsets.read(start.json))
    // Spark's copy of the text, not the same string.
    assertSame(end, offsets.read(new String(end.json)))
    assertEquals(0, parsed)
  }

  @Test def textFromElsewhereIsParsedOnceAndOnlyTheLastFewAreKept(): Unit = {
    val logged = at(7).json // an offset log read after a restart
    val read = offsets.read(logged)
    assertEquals(at(7), read)
    assertSame(read, offsets.read(logged))
    assertEquals(1, parsed)
    (8 to 10).foreach(o => offsets.made(at(o)))
    assertEquals(at(7), offsets.read(logged))
    assertEquals(2, parsed, "four offsets later the first is parsed again")
  }
}
