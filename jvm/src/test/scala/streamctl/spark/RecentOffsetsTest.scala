package streamctl.spark

import org.apache.spark.sql.connector.read.streaming.Offset
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.plan.SourcePosition
import streamctl.planner.SourceStates
import streamctl.system.{SSP, TaskName}

class RecentOffsetsTest {
  private var parsed = 0
  private val offsets = new RecentOffsets(json => { parsed += 1; SourceStates.parse(json) })

  private def at(o: Long) =
    SourcePosition(Map(TaskName("Partition 0") -> Map(SSP.kafka("orders", 0) -> o)))

  /** An offset Spark logged and read back: only its text is the source's. */
  private def logged(o: Offset): Offset =
    new Offset { override def json: String = new String(o.json) }

  @Test def anOffsetSparkHandsBackAsTextIsTheOneTheSourceMade(): Unit = {
    val start = offsets.made(at(1))
    val endPosition = at(2)
    val end = offsets.made(endPosition)
    assertSame(start, offsets.read(start.json))
    // Spark's copy of the text, not the same string.
    assertSame(end, offsets.read(new String(end.json)))
    assertSame(endPosition, offsets.position(logged(end)))
    assertEquals(0, parsed)
  }

  @Test def textFromElsewhereIsParsedOnceAndOnlyTheLastFewAreKept(): Unit = {
    val restart = SourceOffset(at(7)).json // an offset log read after a restart
    val read = offsets.read(restart)
    assertEquals(SourceOffset(at(7)), read)
    assertSame(read, offsets.read(restart))
    assertEquals(1, parsed)
    (8 to 10).foreach(o => offsets.made(at(o)))
    assertEquals(SourceOffset(at(7)), offsets.read(restart))
    assertEquals(2, parsed, "three offsets later the first is parsed again")
  }
}
