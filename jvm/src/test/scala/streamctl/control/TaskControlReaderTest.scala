package streamctl.control

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.system.{Envelope, SSP, SspRange, TaskName}

class TaskControlReaderTest {
  private val m0 = SSP.kafka("mid", 0)
  private val m1 = SSP.kafka("mid", 1)
  private val plain = SSP.kafka("raw", 0)
  private val data = IntermediateMessage.frameUser("row".getBytes)
  private def wm(p: String, ts: Long) = IntermediateMessage.watermark(p, 2, ts)
  private def eos(p: String) = IntermediateMessage.endOfStream(p, 2, 2)

  private def reader(
      ssps: Seq[SSP],
      start: SspControlStates.States = Map.empty,
      others: WatermarkSummary = WatermarkSummary.empty
  ): TaskControlReader =
    TaskControlReader(
      TaskName("Partition 0"),
      ssps.map(SspRange(_, 0, 100)),
      Some(TaskControl(1, SspControlStates.write(start), others)),
      Set("mid")
    ).get

  /** Reads one record; true when it is a user record (a row), false when control consumed it. */
  private def read(r: TaskControlReader, ssp: SSP, offset: Long, value: Array[Byte]): Boolean =
    r.decoderFor(ssp).accept(new Envelope(ssp, offset, -1L, null, value))

  private def watermark(r: TaskControlReader): Option[Long] = Some(r.watermarkMs(m0)).filter(_ >= 0)

  @Test def theWatermarkIsTheMinimumOverIntermediateSsps(): Unit = {
    val t = reader(Seq(m0, m1))
    assertTrue(read(t, m0, 0, data))
    assertEquals(None, watermark(t))
    assertFalse(read(t, m0, 1, wm("p0", 10)))
    assertFalse(read(t, m0, 2, wm("p1", 30)))
    assertEquals(Some(10L), t.state(m0).watermark)
    assertEquals(None, watermark(t), "m1 has not heard from its producers")
    assertFalse(read(t, m1, 0, wm("p0", 50)))
    assertFalse(read(t, m1, 1, wm("p1", 40)))
    assertEquals(Some(10L), watermark(t))
    assertFalse(read(t, m1, 2, wm("p1", 45)))
    assertEquals(Some(10L), watermark(t), "m1 moved but m0 still holds the task at 10")
    assertFalse(read(t, m0, 3, wm("p0", 35)))
    assertEquals(Some(30L), watermark(t))
  }

  @Test def aUserRecordGoesOnWithoutItsFramingAndNothingCopied(): Unit = {
    val t = reader(Seq(m0))
    val e = new Envelope(m0, 3, -1L, null, data)
    assertTrue(t.decoderFor(m0).accept(e))
    assertSame(data, e.value)
    assertEquals(IntermediateMessage.PayloadOffset, e.valueOffset)
    assertEquals("row", new String(e.payload))
  }

  @Test def theRowWatermarkHoldsToTheSourcesOtherSsps(): Unit = {
    val behind =
      Seq(WatermarkMessage("p0", 1, 7)).foldLeft(SspControlState.empty)((s, m) => s(m, m1, 0).state)
    val t = reader(Seq(m0), others = WatermarkSummary.of(Seq(behind)))
    read(t, m0, 0, wm("p0", 10)); read(t, m0, 1, wm("p1", 30))
    assertEquals(Some(7L), watermark(t))
  }

  @Test def nonIntermediateSspsAreNotTracked(): Unit = {
    val t = TaskControlReader(
      TaskName("Partition 0"),
      Seq(SspRange(m0, 0, 9), SspRange(plain, 0, 9)),
      Some(TaskControl(1, "{}", WatermarkSummary.empty)),
      Set("mid")
    ).get
    val raw = "not framed".getBytes
    val e = new Envelope(plain, 5, -1L, null, raw)
    assertTrue(t.decoderFor(plain).accept(e))
    assertSame(raw, e.value)
    assertEquals(0, e.valueOffset)
    assertEquals(-1L, t.watermarkMs(plain))
    assertEquals(Set(m0), t.state.keySet)
  }

  @Test def endOfStreamAcrossARestartThenDataFails(): Unit = {
    // batch 1: one of two producers ends on each partition; the result is checkpointed
    val first = reader(Seq(m0, m1))
    read(first, m0, 0, data)
    read(first, m0, 1, eos("p0"))
    read(first, m1, 0, eos("p0"))
    assertFalse(SspControlStates.allEndOfStream(first.state.keys, first.state.get))
    val checkpointed = SspControlStates.write(SspControlStates.merge(Seq(first.state)))

    // crash; batch 2 starts from the offset log
    val second = reader(Seq(m0, m1), SspControlStates.parse(checkpointed, "offset log"))
    assertTrue(read(second, m0, 2, data))
    read(second, m0, 3, eos("p1"))
    assertTrue(second.state(m0).isEndOfStream)
    assertFalse(SspControlStates.allEndOfStream(second.state.keys, second.state.get))
    read(second, m1, 1, eos("p1"))
    assertTrue(SspControlStates.allEndOfStream(second.state.keys, second.state.get))

    val e = assertThrows(classOf[StreamctlException], () => read(second, m0, 4, data))
    assertTrue(e.getMessage.contains("stream 'mid' partition 0 offset 4"), e.getMessage)
  }

  @Test def badRecordsNameTheirOffset(): Unit = {
    val t = reader(Seq(m1))
    val e = assertThrows(classOf[StreamctlException], () => read(t, m1, 77, Array[Byte](9, 1)))
    assertTrue(e.getMessage.contains("stream 'mid' partition 1 offset 77"), e.getMessage)
  }

  @Test def startsFromTheBatchState(): Unit = {
    val start = Seq(WatermarkMessage("p0", 2, 10), WatermarkMessage("p1", 2, 20))
      .foldLeft(SspControlState.empty)((s, m) => s(m, m0, 0).state)
    val t = reader(Seq(m0), Map(m0 -> start))
    assertEquals(Some(10L), watermark(t))
    assertFalse(read(t, m0, 9, wm("p0", 5)))
    assertEquals(Some(10L), watermark(t), "older watermark ignored")
    assertFalse(read(t, m0, 10, wm("p0", 25)))
    assertEquals(Some(20L), watermark(t))
    assertEquals(Map("p0" -> 25L, "p1" -> 20L), t.state(m0).producerWatermarks)
  }

  @Test def finishRecordsOnceOnlyWhatTheBatchChanged(): Unit = {
    var recorded = Seq.empty[Option[SspControlStates.States]]
    val quiet = reader(Seq(m0))
    read(quiet, m0, 0, data)
    quiet.finish(recorded :+= _)
    assertEquals(Seq(None), recorded, "a task with nothing to add says it is done")
    recorded = Nil
    val heard = reader(Seq(m0))
    read(heard, m0, 0, eos("p0"))
    heard.finish(recorded :+= _)
    heard.finish(recorded :+= _)
    assertEquals(Seq(Some(heard.state)), recorded)
  }

  @Test def aTaskReadingIntermediateSspsNeedsAControlStart(): Unit = {
    assertEquals(
      None,
      TaskControlReader(TaskName("Partition 0"), Seq(SspRange(plain, 0, 1)), None, Set("mid"))
    )
    val e = assertThrows(
      classOf[StreamctlException],
      () => TaskControlReader(TaskName("Partition 0"), Seq(SspRange(m0, 0, 1)), None, Set("mid"))
    )
    assertTrue(
      e.getMessage.contains("Task 'Partition 0' reads intermediate SSPs mid-0"),
      e.getMessage
    )
  }
}
