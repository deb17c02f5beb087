package streamctl.control

import java.nio.charset.StandardCharsets.UTF_8

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.system.SSP

class IntermediateMessageTest {
  private val ssp = SSP.kafka("orders", 3)
  private val offset = 42L

  private def control(typeByte: Int, json: String): Array[Byte] =
    Array(typeByte.toByte) ++ json.getBytes(UTF_8)

  private def assertFails(bytes: Array[Byte], expected: String*): StreamctlException = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => IntermediateRecords.decode(ssp, offset, bytes)
    )
    val m = e.getMessage
    for (part <- Seq("stream 'orders'", "partition 3", "offset 42") ++ expected)
      assertTrue(m.contains(part), s"'$part' missing from: $m")
    e
  }

  @Test def userPayloadRoundTripsUntouched(): Unit = {
    val payload = (0 until 256).map(_.toByte).toArray
    val before = payload.clone()
    val framed = IntermediateMessage.frameUser(payload)
    assertArrayEquals(before, payload, "input must not be modified")
    assertEquals(payload.length + 1, framed.length)
    assertEquals(IntermediateMessage.UserType, framed(0))
    IntermediateRecords.decode(ssp, offset, framed) match {
      case u: UserMessage => assertArrayEquals(payload, u.payload)
      case other => fail(s"expected a user message, got $other")
    }
  }

  @Test def emptyUserPayloadIsStillFramed(): Unit = {
    val framed = IntermediateMessage.frameUser(Array.emptyByteArray)
    assertArrayEquals(Array[Byte](0), framed)
    assertEquals(
      0,
      IntermediateRecords.decode(ssp, offset, framed).asInstanceOf[UserMessage].payload.length
    )
  }

  @Test def userPayloadIsAvailableAsAnOffsetView(): Unit = {
    val framed = IntermediateMessage.frameUser("hello".getBytes(UTF_8))
    assertEquals(IntermediateMessage.UserType, IntermediateMessage.typeOf(ssp, offset, framed))
    val view = new String(
      framed,
      IntermediateMessage.PayloadOffset,
      IntermediateMessage.payloadLength(framed),
      UTF_8
    )
    assertEquals("hello", view)
  }

  @Test def watermarkRoundTrips(): Unit = {
    val bytes = IntermediateMessage.watermark("Partition 0", 3, 1700000000123L)
    assertEquals(IntermediateMessage.WatermarkType, bytes(0))
    assertEquals(
      WatermarkMessage("Partition 0", 3, 1700000000123L),
      IntermediateRecords.decode(ssp, offset, bytes)
    )
    val json = new String(bytes, 1, bytes.length - 1, UTF_8)
    assertTrue(json.contains("\"version\":1"), json)
  }

  @Test def endOfStreamRoundTrips(): Unit = {
    val bytes = IntermediateMessage.endOfStream("Partition 1", 2, partitions = 6)
    assertEquals(IntermediateMessage.EndOfStreamType, bytes(0))
    assertEquals(
      EndOfStreamMessage("Partition 1", 2, Some(6)),
      IntermediateRecords.decode(ssp, offset, bytes)
    )
  }

  @Test def anEndOfStreamWithoutItsPartitionCountReadsAsNotSayingIt(): Unit =
    // as streamctl wrote them before the count, and as a reader before it reads the new ones
    assertEquals(
      EndOfStreamMessage("p", 1, None),
      IntermediateRecords.decode(
        ssp,
        offset,
        control(2, """{"version":1,"taskName":"p","taskCount":1}""")
      )
    )

  @Test def anEndOfStreamsPartitionCountMustBeAPositiveInteger(): Unit =
    for (bad <- Seq("0", "-1", "\"4\"", "2.5", "9999999999")) {
      val e = assertThrows(
        classOf[StreamctlException],
        () =>
          IntermediateRecords.decode(
            ssp,
            offset,
            control(2, s"""{"version":1,"taskName":"p","taskCount":1,"partitions":$bad}""")
          )
      )
      assertTrue(e.getMessage.contains("partitions"), e.getMessage)
    }

  @Test def unknownFieldsOfTheCurrentVersionAreIgnored(): Unit =
    assertEquals(
      EndOfStreamMessage("p", 1),
      IntermediateRecords.decode(
        ssp,
        offset,
        control(2, """{"version":1,"taskName":"p","taskCount":1,"note":"x"}""")
      )
    )

  @Test def idleAndActiveRoundTripWithAndWithoutTheProducersWatermark(): Unit = {
    for (wm <- Seq(Some(1700000000123L), None)) {
      val idle = IntermediateMessage.idle("by_user", 2, wm)
      assertEquals(IntermediateMessage.IdleType, idle(0))
      assertEquals(IdleMessage("by_user", 2, wm), IntermediateRecords.decode(ssp, offset, idle))
      val active = IntermediateMessage.active("by_user", 2, wm)
      assertEquals(IntermediateMessage.ActiveType, active(0))
      assertEquals(ActiveMessage("by_user", 2, wm), IntermediateRecords.decode(ssp, offset, active))
      val json = new String(idle, 1, idle.length - 1, UTF_8)
      assertEquals(wm.isDefined, json.contains("\"timestamp\""), json)
    }
    assertFails(
      control(3, """{"version":1,"taskName":"p","taskCount":1,"timestamp":"x"}"""),
      "idle message",
      "'timestamp'"
    )
  }

  @Test def unknownTypeByteFailsSayingWhatToUpgrade(): Unit = {
    assertFails(
      control(7, """{"version":1,"taskName":"p","taskCount":1}"""),
      "unknown type byte 7",
      "upgrade streamctl in the consuming query"
    )
    assertFails(control(5, """{"version":1,"taskName":"p","taskCount":1}"""), "unknown type byte 5")
    assertFails(Array[Byte](-1, 1), "unknown type byte -1")
  }

  @Test def newerVersionFails(): Unit =
    assertFails(
      control(1, """{"version":2,"taskName":"p","taskCount":1,"timestamp":5,"newField":[1]}"""),
      "version 2",
      "newer"
    )

  @Test def newerVersionIsReportedEvenWhenOtherFieldsChanged(): Unit =
    assertFails(control(2, """{"version":3,"producer":{"id":7}}"""), "version 3", "newer")

  /**
   * The version rule and wording of every streamctl format (Json.version): the value read, and
   * where it was read.
   */
  @Test def aBadVersionIsRefusedAsInEveryOtherFormatNamingTheValueAndWhere(): Unit = {
    val where = "intermediate stream 'orders' partition 3 offset 42"
    def message(typeByte: Int, json: String): String =
      assertThrows(
        classOf[StreamctlException],
        () => IntermediateRecords.decode(ssp, offset, control(typeByte, json))
      ).getMessage
    assertEquals(
      s"The 'version' of the end-of-stream message at $where must be a whole number from 1, not 0",
      message(2, """{"version":0,"taskName":"p","taskCount":1}""")
    )
    assertEquals(
      s"""The 'version' of the end-of-stream message at $where must be a whole number from 1, not "1"""",
      message(2, """{"version":"1","taskName":"p","taskCount":1}""")
    )
    assertEquals(
      s"The 'version' of the idle message at $where must be a whole number from 1, not 1.5",
      message(3, """{"version":1.5,"taskName":"p","taskCount":1}""")
    )
    assertEquals(
      s"Missing field 'version' in the end-of-stream message at $where",
      message(2, """{"taskName":"p","taskCount":1}""")
    )
    assertEquals(
      s"the watermark message at $where has version 2, newer than this streamctl reads (up to 1): upgrade streamctl",
      message(1, """{"version":2,"taskName":"p","taskCount":1,"timestamp":5}""")
    )
  }

  @Test def malformedJsonFails(): Unit = {
    assertFails(control(1, """{"version":1,"taskName":"p","""), "malformed JSON", "watermark")
    assertFails(control(2, "not json"), "malformed JSON", "end-of-stream")
    assertFails(
      control(2, "{\"version\":1,\"taskName\":\"p\",\"taskCount\":1} trailing"),
      "malformed JSON"
    )
    assertFails(
      control(2, """{"version":1,"taskName":"p","taskName":"q","taskCount":1}"""),
      "malformed JSON"
    )
    assertFails(Array[Byte](2, 0xff.toByte, 0xfe.toByte), "malformed JSON")
  }

  @Test def controlTypeWithNoPayloadFails(): Unit = {
    assertFails(Array[Byte](1), "not a JSON object")
    assertFails(control(2, "[1,2]"), "not a JSON object")
  }

  @Test def badFieldsFail(): Unit = {
    assertFails(control(2, """{"version":1,"taskName":"","taskCount":1}"""), "'taskName'")
    assertFails(control(2, """{"version":1,"taskName":5,"taskCount":1}"""), "'taskName'")
    assertFails(control(2, """{"version":1,"taskName":"p","taskCount":0}"""), "taskCount 0")
    assertFails(control(2, """{"version":1,"taskName":"p","taskCount":1.5}"""), "'taskCount'")
    assertFails(control(1, """{"version":1,"taskName":"p","taskCount":1}"""), "'timestamp'")
    assertFails(
      control(1, """{"version":1,"taskName":"p","taskCount":1,"timestamp":"5"}"""),
      "'timestamp'"
    )
  }

  @Test def emptyOrNullValueFails(): Unit = {
    assertFails(Array.emptyByteArray, "empty value", "framing")
    assertFails(null, "null value", "framing")
  }

  @Test def errorExcerptOfAHugePayloadIsBounded(): Unit = {
    val e = assertFails(control(2, "x" * 100000), "malformed JSON")
    assertTrue(e.getMessage.length < 1000, s"${e.getMessage.length} chars")
  }

  @Test def decodeControlRejectsUserMessages(): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () =>
        IntermediateMessage.decodeControl(
          ssp,
          offset,
          IntermediateMessage.frameUser(Array[Byte](1))
        )
    )
    assertTrue(e.getMessage.contains("offset 42"))
  }

  @Test def encodingRejectsBadProducers(): Unit = {
    assertThrows(classOf[StreamctlException], () => IntermediateMessage.endOfStream("", 1, 1))
    assertThrows(classOf[StreamctlException], () => IntermediateMessage.watermark("p", 0, 1L))
  }
}
