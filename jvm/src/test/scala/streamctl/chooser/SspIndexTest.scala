package streamctl.chooser

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.system.SSP

class SspIndexTest {
  @Test def idsAreDenseAndSurviveNewInstancesAndCacheCollisions(): Unit = {
    val idx = new SspIndex
    val ssps = (0 until 3000).map(p => SSP.kafka("s" + (p % 7), p))
    assertEquals(ssps.indices, ssps.map(idx.add))
    assertEquals(5, idx.add(SSP.kafka("s5", 5)))
    // Three rounds: cached instances, fresh equal instances (cache misses), cached again.
    (1 to 3).foreach { round =>
      ssps.indices.foreach { i =>
        val s = if (round == 2) ssps(i).copy() else ssps(i)
        assertEquals(i, idx.idOf(s))
      }
    }
    assertEquals(-1, idx.idOf(SSP.kafka("other", 0)))
    assertSame(ssps(42), idx.ssp(42))
  }

  @Test def requireNamesTheSspAndTheChooser(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => new SspIndex().require(SSP.kafka("x", 1), "SomeChooser")
    )
    assertTrue(
      e.getMessage.contains("SomeChooser") && e.getMessage.contains("kafka/x/1"),
      e.getMessage
    )
  }
}
