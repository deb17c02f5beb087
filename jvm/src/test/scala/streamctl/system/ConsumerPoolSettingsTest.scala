package streamctl.system

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException

class ConsumerPoolSettingsTest {
  private def applied(settings: (String, String)*): (Option[Int], Long) = {
    val before = (ConsumerPool.maxConsumers, ConsumerPool.maxMetadataPartitions)
    try {
      ConsumerPoolSettings.bounds(settings.toMap.get)
      (ConsumerPool.maxConsumers, ConsumerPool.maxMetadataPartitions)
    } finally {
      ConsumerPool.maxConsumers = before._1
      ConsumerPool.maxMetadataPartitions = before._2
    }
  }

  @Test def boundsComeFromTheirSettingsAndTheOldNameStillCounts(): Unit = {
    val prefix = "spark.streamctl.consumerPool."
    assertEquals(
      (Some(40), 5000L),
      applied(s"${prefix}maxConsumers" -> "40", s"${prefix}maxMetadataPartitions" -> "5000")
    )
    assertEquals(Some(7), applied(s"${prefix}maxIdle" -> "7")._1)
    assertEquals(Some(40), applied(s"${prefix}maxIdle" -> "7", s"${prefix}maxConsumers" -> "40")._1)
    assertEquals((ConsumerPool.maxConsumers, ConsumerPool.maxMetadataPartitions), applied())
  }

  @Test def aBoundThatIsNotAPositiveNumberNamesItsSetting(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => applied("spark.streamctl.consumerPool.maxMetadataPartitions" -> "lots")
    )
    assertEquals(
      "Spark setting 'spark.streamctl.consumerPool.maxMetadataPartitions' must be an integer > 0, not 'lots'",
      e.getMessage
    )
    assertThrows(
      classOf[StreamctlException],
      () => applied("spark.streamctl.consumerPool.maxConsumers" -> "0")
    )
  }
}
