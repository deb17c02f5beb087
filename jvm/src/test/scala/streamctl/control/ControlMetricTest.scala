package streamctl.control

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.system.SSP

class ControlMetricTest {
  @Test def figuresRoundTripByDisplayName(): Unit = {
    val ended = SspControlFigures(2, 2, 2, 0, None)
    val live = SspControlFigures(2, 2, 1, 1, Some(1714557600000L))
    val json = ControlMetric.write(Seq(SSP.kafka("mid", 0) -> ended, SSP.kafka("mid", 1) -> live))
    assertEquals(Map("mid-0" -> ended, "mid-1" -> live), ControlMetric.read(json))
    assertTrue(ended.ended)
    assertFalse(live.ended)
  }

  @Test def aPartitionNoControlMessageReachedIsNotEnded(): Unit = {
    // taskCount 0: no producer has said how many there are, so none can have ended it.
    val json = """{"mid-0":{"taskCount":0,"endOfStream":0}}"""
    assertEquals(Map("mid-0" -> SspControlFigures(0, 0, 0, 0, None)), ControlMetric.read(json))
    assertFalse(ControlMetric.read(json)("mid-0").ended)
  }
}
