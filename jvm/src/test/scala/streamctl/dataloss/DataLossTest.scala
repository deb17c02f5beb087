package streamctl.dataloss

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.Json
import streamctl.system.{SSP, SkippedRange, StreamDescription}

class DataLossTest {
  private def orders(p: Int) = SSP.kafka("orders", p)

  @Test def gapsAreTheOffsetsBetweenAPositionAndTheOldestRecord(): Unit = {
    val gaps = DataLoss.gaps(
      Map(orders(0) -> 1000L, orders(1) -> 1000L, orders(2) -> 7L, orders(3) -> 5L),
      Map(orders(0) -> 1500L, orders(1) -> 1200L, orders(2) -> 7L, orders(3) -> 0L)
    )
    assertEquals(
      Seq(SkippedRange(orders(0), 1000, 1500), SkippedRange(orders(1), 1000, 1200)),
      gaps
    )
    assertEquals(700L, DataLoss.empty.skip(gaps).recordsSkipped)
    assertEquals(
      "stream 'orders' partition 1: skipped offsets 1000 to 1199 (200 records), which are no longer on the " +
        "broker (deleted by retention?), because option 'failOnDataLoss' is false",
      gaps(1).describe
    )
  }

  @Test def totalsAreCarriedAndEachBatchKeepsItsOwnRanges(): Unit = {
    val first = DataLoss.empty.skip(Seq(SkippedRange(orders(0), 0, 10))).recreate(Seq(Recreation(
      "orders",
      "a",
      "b"
    )))
    val next = first.carried.skippedWhileReading(Seq(SkippedRange(orders(1), 4, 6)))
    // Per SSP too, so that a partition's total is known.
    assertEquals(DataLoss(12, 1, Nil, Nil, Map(orders(0) -> 10L, orders(1) -> 2L)), next)
    assertTrue(DataLoss.empty.carried.isEmpty)
    for (loss <- Seq(first, next))
      assertEquals(
        loss,
        DataLoss.Codec.read(Json.parse(Json.write(DataLoss.Codec.write(loss)), "test"), "test")
      )
  }

  @Test def aChangedTopicIdIsARecreation(): Unit = {
    val recorded = StreamIds(Map("orders" -> "id-1", "rates" -> "id-2"))
    val now = Map(
      "orders" -> StreamDescription(2, Some("id-9")),
      "rates" -> StreamDescription(1, Some("id-2"))
    )
    assertEquals(Seq(Recreation("orders", "id-1", "id-9")), recorded.recreatedIn(now))
    assertEquals(StreamIds(Map("orders" -> "id-9", "rates" -> "id-2")), recorded.updated(now))
  }

  @Test def streamsWithoutARecordedOrCurrentIdAreNoRecreation(): Unit = {
    // A checkpoint from before IDs were recorded, and a broker that answers none.
    assertEquals(
      Nil,
      StreamIds.empty.recreatedIn(Map("orders" -> StreamDescription(1, Some("id-1"))))
    )
    val recorded = StreamIds(Map("orders" -> "id-1"))
    assertEquals(Nil, recorded.recreatedIn(Map("orders" -> StreamDescription(1, None))))
    assertEquals(recorded, recorded.updated(Map("orders" -> StreamDescription(1, None))))
    assertEquals(
      StreamIds(Map("orders" -> "id-1")),
      StreamIds.empty.updated(Map("orders" -> StreamDescription(1, Some("id-1"))))
    )
    assertEquals(recorded, StreamIds.Codec.read(StreamIds.Codec.write(recorded), "test"))
  }
}
