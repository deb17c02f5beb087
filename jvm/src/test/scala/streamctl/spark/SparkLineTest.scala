package streamctl.spark

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class SparkLineTest {
  @Test def theLineIsMajorAndMinor(): Unit = {
    assertEquals("4.0", SparkLine.of("4.0.0-preview2"))
    assertEquals("3.5", SparkLine.of("3.5.1-databricks"))
    assertEquals("4.3", SparkLine.of("4.3"))
  }

  @Test def aJarOfAnotherLineIsNamedWithTheOneToUse(): Unit = {
    assertEquals(None, SparkLine.mismatch("4.3.0", "4.3.1"))
    assertEquals(None, SparkLine.mismatch("4.0.4", "4.0.0-preview2"))
    val m = SparkLine.mismatch("4.0.4", "4.1.3").get
    assertTrue(
      m.startsWith("This streamctl jar was built for Spark 4.0, but it runs on Spark 4.1.3"),
      m
    )
    assertTrue(m.contains("streamctl-spark4.1 jar"), m)
  }

  @Test def theJarBuiltHereIsTheRunningSparksLine(): Unit = SparkLine.check()
}
