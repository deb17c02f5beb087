package streamctl.control

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.system.SSP

import ReaderControlTracker.{Control, User, WatermarkAdvanced}

class ReaderControlTrackerTest {
  private val m0 = SSP.kafka("mid", 0)
  private val m1 = SSP.kafka("mid", 1)
  private val plain = SSP.kafka("raw", 0)
  private val data = IntermediateMessage.frameUser("row".getBytes)
  private def wm(p: String, ts: Long) = IntermediateMessage.watermark(p, 2, ts)
  private def eos(p: String) = IntermediateMessage.endOfStream(p, 2)

  @Test def taskWatermarkIsTheMinimumOverIntermediateSsps(): Unit = {
    val t = new ReaderControlTracker(Seq(m0, m1), Map.empty)
    assertEquals(User, t.read(m0, 0, data))
    assertFalse(t.hasTaskWatermark)
    assertEquals(Control, t.read(m0, 1, wm("p0", 10)))
    assertEquals(Control, t.read(m0, 2, wm("p1", 30)))
    assertEquals(Some(10L), t.channel(m0).watermark)
    assertEquals(None, t.taskWatermark, "m1 has not heard from its producers")
    assertEquals(Control, t.read(m1, 0, wm("p0", 50)))
    assertEquals(WatermarkAdvanced, t.read(m1, 1, wm("p1", 40)))
    assertEquals(Some(10L), t.taskWatermark)
    assertEquals(10L, t.taskWatermarkMs)
    assertEquals(Control, t.read(m1, 2, wm("p1", 45)), "m1 moved but m0 still holds the task at 10")
    assertEquals(WatermarkAdvanced, t.read(m0, 3, wm("p0", 35)))
    assertEquals(Some(30L), t.taskWatermark)
  }

  @Test def nonIntermediateSspsAreNotTracked(): Unit = {
    val t = new ReaderControlTracker(Seq(m0), Map(plain -> ControlState.empty))
    val e = assertThrows(classOf[StreamctlException], () => t.read(plain, 5, data))
    assertTrue(e.getMessage.contains("stream 'raw' partition 0"), e.getMessage)
    assertEquals(Set(m0), t.state.keySet)
  }

  @Test def endOfStreamAcrossARestartThenDataFails(): Unit = {
    // batch 1: one of two producers ends on each partition; the result is checkpointed
    val first = new ReaderControlTracker(Seq(m0, m1), Map.empty)
    first.read(m0, 0, data)
    first.read(m0, 1, eos("p0"))
    first.read(m1, 0, eos("p0"))
    assertFalse(first.allEndOfStream)
    val checkpointed = ControlStates.write(ControlStates.merge(Seq(first.state)))

    // crash; batch 2 starts from the offset log
    val second = new ReaderControlTracker(Seq(m0, m1), ControlStates.parse(checkpointed, "offset log"))
    assertEquals(User, second.read(m0, 2, data))
    second.read(m0, 3, eos("p1"))
    assertTrue(second.channel(m0).isEndOfStream)
    assertFalse(second.allEndOfStream)
    second.read(m1, 1, eos("p1"))
    assertTrue(second.allEndOfStream)

    val e = assertThrows(classOf[StreamctlException], () => second.read(m0, 4, data))
    assertTrue(e.getMessage.contains("stream 'mid' partition 0 offset 4"), e.getMessage)
  }

  @Test def badRecordsNameTheirOffset(): Unit = {
    val t = new ReaderControlTracker(Seq(m1), Map.empty)
    val e = assertThrows(classOf[StreamctlException], () => t.read(m1, 77, Array[Byte](9, 1)))
    assertTrue(e.getMessage.contains("stream 'mid' partition 1 offset 77"), e.getMessage)
  }

  @Test def startsFromTheBatchState(): Unit = {
    val start = Seq(WatermarkMessage("p0", 2, 10), WatermarkMessage("p1", 2, 20))
      .foldLeft(ControlState.empty)((s, m) => s(m, m0, 0).state)
    val t = new ReaderControlTracker(Seq(m0), Map(m0 -> start))
    assertEquals(Some(10L), t.taskWatermark)
    assertEquals(Control, t.read(m0, 9, wm("p0", 5)), "older watermark ignored")
    assertEquals(WatermarkAdvanced, t.read(m0, 10, wm("p0", 25)))
    assertEquals(Some(20L), t.taskWatermark)
    assertEquals(Map("p0" -> 25L, "p1" -> 20L), t.state(m0).producerWatermarks)
  }
}
