package streamctl.system

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class TimeLagTest {
  @Test def caughtUpIsZeroWhateverTheTimes(): Unit = {
    assertEquals(Some(0L), TimeLag.secondsBehind(0, None, None))
    assertEquals(Some(0L), TimeLag.secondsBehind(0, Some(90000L), Some(1000L)))
  }

  @Test def behindIsTheNewestMinusTheProcessedInWholeSeconds(): Unit = {
    assertEquals(Some(60L), TimeLag.secondsBehind(5, Some(90500L), Some(30000L)))
    // Timestamps out of order: never negative.
    assertEquals(Some(0L), TimeLag.secondsBehind(5, Some(1000L), Some(30000L)))
  }

  @Test def unknownWhenEitherTimeIs(): Unit = {
    assertEquals(None, TimeLag.secondsBehind(5, None, Some(30000L)))
    assertEquals(None, TimeLag.secondsBehind(5, Some(30000L), None))
  }

  @Test def recordsBehindAreKnownOnlyWhereTheHeadIs(): Unit = {
    val (a, b) = (SSP.kafka("orders", 0), SSP.kafka("orders", 1))
    // Unknown is left out, not 0: a gauge of 0 would say caught up.
    assertEquals(Map(a -> 3L), TimeLag.recordsBehind(Map(a -> 8L), Map(a -> 5L, b -> 2L)))
    /* A position past the head (the head asked before the batch ended) is caught up, never
     * negative. */
    assertEquals(Map(a -> 0L), TimeLag.recordsBehind(Map(a -> 8L), Map(a -> 9L)))
  }
}
