package streamctl.control

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.grouper.TaskName
import streamctl.system.SSP

class ControlMessagesTest {
  private val ssp = SSP.kafka("mid", 0)

  @Test def producerMessagesDecodeToItsIdentity(): Unit = {
    val control = ControlMessages.forProducer(TaskName("Partition 2"), 4)
    assertEquals(WatermarkMessage("Partition 2", 4, 99L), IntermediateMessage.decode(ssp, 0, control.watermark(99L)))
    assertEquals(EndOfStreamMessage("Partition 2", 4), IntermediateMessage.decode(ssp, 1, control.endOfStream))
  }

  @Test def watermarkIsSentOnlyWhenItAdvances(): Unit = {
    val control = ControlMessages.forProducer("p", 1)
    assertTrue(control.watermarkIfAdvanced(None, 10L).isDefined)
    assertTrue(control.watermarkIfAdvanced(Some(10L), 11L).isDefined)
    assertTrue(control.watermarkIfAdvanced(Some(10L), 10L).isEmpty)
    assertTrue(control.watermarkIfAdvanced(Some(10L), 9L).isEmpty)
  }

  @Test def everyPartitionGetsTheMessage(): Unit = {
    val eos = ControlMessages.forProducer("p", 1).endOfStream
    assertEquals(Seq(0, 1, 2), ControlMessages.toEveryPartition(3, eos).map(_._1))
    assertTrue(ControlMessages.toEveryPartition(3, eos).forall(_._2 eq eos))
  }

  @Test def badIdentityFails(): Unit = {
    assertThrows(classOf[StreamctlException], () => ControlMessages.forProducer("p", 0))
    assertThrows(classOf[StreamctlException], () => ControlMessages.forProducer("", 1))
  }
}
