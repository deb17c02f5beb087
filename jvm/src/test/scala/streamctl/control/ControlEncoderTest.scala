package streamctl.control

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.system.SSP

class ControlEncoderTest {
  private val ssp = SSP.kafka("mid", 0)

  @Test def producerMessagesDecodeToItsIdentity(): Unit = {
    val control = ControlEncoder.forProducer("Partition 2", 4)
    assertEquals(
      WatermarkMessage("Partition 2", 4, 99L),
      IntermediateRecords.decode(ssp, 0, control.watermark(99L))
    )
    assertEquals(
      EndOfStreamMessage("Partition 2", 4, Some(8)),
      IntermediateRecords.decode(ssp, 1, control.endOfStream(partitions = 8))
    )
    assertEquals(
      IdleMessage("Partition 2", 4, Some(7L)),
      IntermediateRecords.decode(ssp, 2, control.idle(Some(7L)))
    )
    assertEquals(
      ActiveMessage("Partition 2", 4, None),
      IntermediateRecords.decode(ssp, 3, control.active(None))
    )
  }

  @Test def badIdentityFails(): Unit = {
    assertThrows(classOf[StreamctlException], () => ControlEncoder.forProducer("p", 0))
    assertThrows(classOf[StreamctlException], () => ControlEncoder.forProducer("", 1))
  }
}
