package streamctl.control

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.system.SSP

class WatermarkSummaryTest {
  private val ssp = SSP.kafka("mid", 0)

  private def state(messages: ControlMessage*): SspControlState =
    messages.foldLeft(SspControlState.empty)((s, m) => s(m, ssp, 0).state)

  private val undefined = state(WatermarkMessage("p0", 2, 10))
  private val live10 = state(WatermarkMessage("p0", 2, 10), WatermarkMessage("p1", 2, 30))
  private val live20 = state(WatermarkMessage("p0", 2, 20), WatermarkMessage("p1", 2, 25))
  private val ended40 =
    state(WatermarkMessage("p0", 2, 40), EndOfStreamMessage("p0", 2), EndOfStreamMessage("p1", 2))
  private val endedBare = state(EndOfStreamMessage("p0", 2), EndOfStreamMessage("p1", 2))
  private val idle50 =
    state(WatermarkMessage("p0", 2, 50), IdleMessage("p0", 2, None), IdleMessage("p1", 2, Some(5)))
  private val idleBare = state(IdleMessage("p0", 2, None), IdleMessage("p1", 2, None))

  @Test def agreesWithTaskWatermarkForEverySplit(): Unit = {
    val all =
      Seq(undefined, live10, live20, ended40, endedBare, idle50, idleBare, SspControlState.empty)
    for {
      n <- 0 to all.size
      subset <- all.combinations(n)
      cut <- 0 to subset.size
    } {
      val (a, b) = subset.splitAt(cut)
      assertEquals(
        WatermarkSummary.of(subset).watermark,
        (WatermarkSummary.of(a) ++ WatermarkSummary.of(b)).watermark,
        s"split $a | $b"
      )
    }
  }

  @Test def liveSspsHoldTheMinimumEndedOnesCountOnlyAlone(): Unit = {
    assertEquals(Some(10L), WatermarkSummary.of(Seq(live10, live20, ended40)).watermark)
    assertEquals(Some(40L), WatermarkSummary.of(Seq(ended40, endedBare)).watermark)
    assertEquals(None, WatermarkSummary.of(Seq(live10, undefined)).watermark)
    assertEquals(None, WatermarkSummary.empty.watermark)
  }

  @Test def sspsWhoseProducersAreAllIdleDoNotHoldTheOthersBack(): Unit = {
    assertTrue(idle50.isIdle && idleBare.isIdle)
    assertEquals(
      Some(10L),
      WatermarkSummary.of(Seq(live10, idle50)).watermark,
      "the live SSP decides"
    )
    assertEquals(
      Some(20L),
      WatermarkSummary.of(Seq(live20, idleBare)).watermark,
      "an idle SSP without a watermark neither"
    )
    assertEquals(
      Some(50L),
      WatermarkSummary.of(Seq(idle50, ended40, idleBare)).watermark,
      "nothing live: the highest"
    )
    assertEquals(
      None,
      WatermarkSummary.of(Seq(undefined, idle50)).watermark,
      "a live undefined SSP still holds everything"
    )
  }
}
