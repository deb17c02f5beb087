package streamctl.startpoint

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.system.{SSP, TaskName}

class StartpointKeyTest {
  private val ssp = SSP.kafka("orders.eu_west-1", 12)

  @Test def sspAndTaskKeysRoundTrip(): Unit =
    for (
      key <- Seq(
        StartpointKey(ssp),
        StartpointKey(ssp, TaskName("Partition 12")),
        StartpointKey(ssp, TaskName("a/b/../c")),
        StartpointKey(ssp, TaskName(" "))
      )
    )
      assertEquals(key, StartpointKey.parse(key.storeKey))

  @Test def encodingIsDocumentedForm(): Unit = {
    assertEquals("kafka/orders.eu_west-1/12", StartpointKey(ssp).storeKey)
    assertEquals(
      "kafka/orders.eu_west-1/12/Partition 12",
      StartpointKey(ssp, TaskName("Partition 12")).storeKey
    )
  }

  @Test def notAKeyIsAnErrorNamingIt(): Unit =
    for (
      bad <- Seq(
        "kafka/orders",
        "kafka/orders/x",
        "kafka/orders/3/",
        "/orders/3",
        "kafka//3",
        "kafka/orders/-1",
        "kafka/orders/99999999999"
      )
    )
      assertTrue(
        assertThrows(
          classOf[StreamctlException],
          () => StartpointKey.parse(bad)
        ).getMessage.contains(s"'$bad'"),
        bad
      )

  @Test def namesThatWouldBreakTheEncodingAreRefused(): Unit = {
    assertThrows(classOf[StreamctlException], () => StartpointKey(SSP.kafka("a/b", 0)))
    assertThrows(classOf[StreamctlException], () => StartpointKey(ssp, TaskName("")))
    assertThrows(classOf[StreamctlException], () => StartpointKey(SSP.kafka("orders", -1)))
  }

  @Test def aKeyNotInCanonicalFormIsRefusedNamingTheCanonicalOne(): Unit =
    for (
      (bad, canonical) <- Seq(
        "kafka/orders/03" -> "kafka/orders/3",
        "kafka/orders/00" -> "kafka/orders/0",
        "kafka/orders/003/Partition 3" -> "kafka/orders/3/Partition 3"
      )
    ) {
      val m = assertThrows(classOf[StreamctlException], () => StartpointKey.parse(bad)).getMessage
      assertTrue(m.contains(s"'$bad'") && m.contains(s"'$canonical'"), m)
    }
}
