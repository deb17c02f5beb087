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
}
