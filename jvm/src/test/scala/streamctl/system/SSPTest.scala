package streamctl.system

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.StreamctlException

class SSPTest {
  @Test def keyRoundTrips(): Unit = {
    val ssp = SSP.kafka("orders.eu_west-1", 12)
    assertEquals("kafka/orders.eu_west-1/12", ssp.key)
    assertEquals(ssp, SSP.parse(ssp.key))
  }

  @Test def badKeyNamesTheKey(): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => SSP.parse("kafka/orders"))
    assertTrue(e.getMessage.contains("'kafka/orders'"))
  }
}
