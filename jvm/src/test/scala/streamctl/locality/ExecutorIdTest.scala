package streamctl.locality

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.StreamctlException

class ExecutorIdTest {
  @Test def rendersSparkExecutorLocation(): Unit =
    assertEquals("executor_10.0.0.7_12", ExecutorId("12", "10.0.0.7").location)

  @Test def sameIdOnAnotherHostIsAnotherExecutor(): Unit =
    assertNotEquals(ExecutorId("1", "a"), ExecutorId("1", "b"))

  @Test def emptyIdNamesTheHost(): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => ExecutorId("", "worker-3"))
    assertTrue(e.getMessage.contains("'worker-3'"), e.getMessage)
  }

  @Test def emptyHostNamesTheExecutor(): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => ExecutorId("4", ""))
    assertTrue(e.getMessage.contains("'4'"), e.getMessage)
  }
}
