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

  @Test def aKeyWhosePartitionIsNoIntIsRefusedNamingTheKey(): Unit = {
    /* 2147483648 once escaped as a NumberFormatException, past the callers' StreamctlException
     * catch. */
    Seq(
      "kafka/orders/2147483648",
      "kafka/orders/9999999999",
      "kafka/orders/-1",
      "kafka/orders/\u0663",
      "kafka//3",
      "/orders/3",
      "kafka/orders/"
    ).foreach { key =>
      val e = assertThrows(classOf[StreamctlException], () => SSP.parse(key))
      assertTrue(e.getMessage.contains(s"'$key'"), e.getMessage)
    }
    assertEquals(SSP.kafka("orders", 999999999), SSP.parse("kafka/orders/999999999"))
  }

  @Test def sspsSortBySystemThenStreamThenPartitionNumber(): Unit = {
    val ssps = Seq(
      SSP("kafka", "orders", 10),
      SSP("kafka", "orders", 2),
      SSP("kafka", "audit", 7),
      SSP("alpha", "zeta", 0),
      SSP("kafka", "orders", 2)
    )
    assertEquals(
      Seq(
        SSP("alpha", "zeta", 0),
        SSP("kafka", "audit", 7),
        SSP("kafka", "orders", 2),
        SSP("kafka", "orders", 2),
        SSP("kafka", "orders", 10)
      ),
      ssps.sorted
    )
    assertEquals(
      0,
      SSP.ordering.compare(SSP.kafka("orders", 3), SSP.kafka(new String("orders"), 3))
    )
  }

  @Test def aDefaultTaskNameGivesItsPartitionBackAndNoOtherNameDoes(): Unit = {
    Seq(0, 7, 10, 4095, 16383, 16384, Int.MaxValue).foreach { p =>
      assertEquals(TaskName(s"Partition $p"), TaskName.ofPartition(p))
      assertEquals(p, TaskName.partitionOf(TaskName.ofPartition(p)))
    }
    assertSame(TaskName.ofPartition(5), TaskName.ofPartition(5))
    Seq(
      "Partition 07",
      "Partition ",
      "Partition -1",
      "Partition 2147483648",
      "partition 3",
      "Partition 3 ",
      "SystemStreamPartition [kafka, orders, 3]",
      "Partition 99999999999"
    )
      .foreach(name => assertEquals(-1, TaskName.partitionOf(TaskName(name)), name))
  }
}
