package streamctl.spark

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.control.SinkOptions

/**
 * The driver's check of the sink's topic is its own, not Kafka's: only the writers need Kafka, as
 * with Spark's sink, so a driver that cannot ask leaves the check to them.
 */
class SinkTopicCheckTest {
  private val layout = new RowLayout(-1, false, 0, false, -1, -1, -1)

  private def write(extra: (String, String)*) =
    SinkWrite(SinkOptions(Map("topic" -> "out") ++ extra), layout)

  @Test def aBrokerTheDriverCannotReachLeavesTheCheckToTheWriters(): Unit = {
    val started = System.nanoTime()
    write("kafka.bootstrap.servers" -> "127.0.0.1:1").checkTopic()
    val tookMs = (System.nanoTime() - started) / 1000000L
    assertTrue(tookMs < 30000, s"waited $tookMs ms, not at most the check's own 10 s")
  }

  @Test def aClientTheDriverCannotMakeLeavesTheCheckToTheWriters(): Unit =
    // A truststore shipped to the executors (--files) is not where a client-mode driver runs.
    write(
      "kafka.bootstrap.servers" -> "127.0.0.1:1",
      "kafka.security.protocol" -> "SSL",
      "kafka.ssl.truststore.location" -> "truststore-only-on-executors.jks",
      "kafka.ssl.truststore.password" -> "secret"
    ).checkTopic()
}
