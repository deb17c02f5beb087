package streamctl.system

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.chooser.{ChooserConfig, ChooserFactory, StopFailingUserChooser}

class KafkaTaskReaderCloseTest {
  @Test def aUserChoosersFailureToStopNamesItsClass(): Unit =
    failsToStopNamingTheUserClass(Map.empty)

  // streamctl's own choosers around the user's (batching, priority tiers) leave its name in errors.
  @Test def aWrappedUserChoosersFailureToStopNamesItsClass(): Unit =
    failsToStopNamingTheUserClass(Map("chooser.batch.size" -> "4", "stream.b.priority" -> "1"))

  private def failsToStopNamingTheUserClass(more: Map[String, String]): Unit = {
    val a0 = SSP.kafka("a", 0)
    val b0 = SSP.kafka("b", 0)
    val chooser = ChooserFactory.forReader(
      ChooserConfig.parse(
        Map("chooser.class" -> classOf[StopFailingUserChooser].getName) ++ more,
        Seq("a", "b")
      ),
      Map(a0 -> 0L, b0 -> 0L),
      Map.empty
    )
    val reader = new KafkaTaskReader(
      Seq(SspRange(a0, 0, 1), SspRange(b0, 0, 1)),
      KafkaMocks.consumer[Array[Byte], Array[Byte]]("earliest"),
      chooser,
      BrokerWait("test", 500, "poll.timeout.ms")
    )
    val e = assertThrows(classOf[StreamctlException], () => reader.close())
    assertEquals(
      s"The message chooser of this task (${classOf[StopFailingUserChooser].getName}) failed to stop: " +
        "java.lang.IllegalStateException: lost its licence server",
      e.getMessage
    )
    assertTrue(e.getCause.isInstanceOf[IllegalStateException])
  }
}
