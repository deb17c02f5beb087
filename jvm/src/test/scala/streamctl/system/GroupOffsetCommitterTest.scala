package streamctl.system

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class GroupOffsetCommitterTest {
  private val p0 = SSP.kafka("orders", 0)
  private val p1 = SSP.kafka("orders", 1)
  private val p2 = SSP.kafka("orders", 2)

  @Test def aReportMovesOnlyThePartitionsPastTheLastBatchEnd(): Unit = {
    val end = Map(p0 -> 10L, p1 -> 20L)
    // p0 read on, p1 reported late from the batch that ended at 20, p2 new since that batch.
    assertEquals(
      Map(p0 -> 12L, p2 -> 3L),
      GroupOffsetCommitter.ahead(Map(p0 -> 12L, p1 -> 18L, p2 -> 3L), end)
    )
    assertEquals(Map.empty, GroupOffsetCommitter.ahead(Map(p0 -> 10L), end))
  }
}
