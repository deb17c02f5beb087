package streamctl

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class ClosingTest {
  @Test def everyStepRunsAndTheFirstFailureCarriesTheLaterOnes(): Unit = {
    val ran = scala.collection.mutable.Buffer[String]()
    val first = new InterruptedException("stopped while waiting")
    val later = new IllegalStateException("store gone")
    val e = assertThrows(
      classOf[InterruptedException],
      () =>
        Closing.all(
          () => { ran += "committer"; throw first },
          () => ran += "admin",
          () => { ran += "store"; throw later }
        )
    )
    assertSame(first, e)
    assertEquals(Seq(later), e.getSuppressed.toSeq)
    assertEquals(Seq("committer", "admin", "store"), ran.toSeq)
    Closing.all(() => ran += "clean")
    assertEquals("clean", ran.last)
  }
}
