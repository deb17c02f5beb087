package streamctl.startpoint

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.startpoint.Startpoint._

class StartpointTest {
  @Test def negativeOffsetIsRejected(): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => Startpoint.specific(-1))
    assertTrue(e.getMessage.contains("offset -1 is negative"), e.getMessage)
  }

  @Test def negativeTimestampIsRejected(): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => Startpoint.timestamp(-5))
    assertTrue(e.getMessage.contains("-5 ms is negative"), e.getMessage)
  }

  @Test def badCustomKindIsRejected(): Unit = {
    assertThrows(classOf[StreamctlException], () => Startpoint.custom("", "{}"))
    assertThrows(classOf[StreamctlException], () => Startpoint.custom("a/b", "{}"))
    assertThrows(classOf[StreamctlException], () => Startpoint.custom("ok", null))
  }

  @Test def factoriesStampTheCreationTime(): Unit = {
    val before = System.currentTimeMillis()
    val sp = Startpoint.oldest()
    assertTrue(sp.creationTimeMs >= before && sp.creationTimeMs <= System.currentTimeMillis())
  }

  @Test def visitorDispatchesOnType(): Unit = {
    val name = new StartpointVisitor[String] {
      def visitSpecific(s: Specific) = s"specific ${s.offset}"
      def visitTimestamp(s: Timestamp) = s"timestamp ${s.epochMs}"
      def visitOldest(s: Oldest) = "oldest"
      def visitUpcoming(s: Upcoming) = "upcoming"
      def visitCustom(s: Custom) = s"custom ${s.kind}"
    }
    assertEquals(
      Seq("specific 4", "timestamp 9", "oldest", "upcoming", "custom k"),
      Seq(Specific(4, 0), Timestamp(9, 0), Oldest(0), Upcoming(0), Custom("k", "", 0)).map(_.accept(name)))
  }

  @Test def describeIsReadable(): Unit = {
    assertEquals("timestamp 2024-05-01T10:00:00Z", Timestamp(1714557600000L, 0).describe)
    assertEquals("offset 7", Specific(7, 0).describe)
  }
}
