package streamctl.plan

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.system.SSP

class HeadsTest {
  @Test def headsRoundTripSortedBySsp(): Unit = {
    val heads = Map(SSP.kafka("o", 1) -> 7L, SSP.kafka("o", 0) -> 20L, SSP.kafka("a", 3) -> 0L)
    val json = Heads.write(heads)
    assertEquals("""{"heads":{"kafka/a/3":0,"kafka/o/0":20,"kafka/o/1":7}}""", json)
    assertEquals(heads, Heads.read(json))
  }

  @Test def aReportWithoutStreamctlHeadsHasNone(): Unit = {
    assertEquals(Map.empty, Heads.read(null))
    assertEquals(Map.empty, Heads.read("""{"o":{"0":20}}""")) // the built-in source's latestOffset
    assertEquals(Map.empty, Heads.read("42"))
  }
}
