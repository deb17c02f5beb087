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

  @Test def describeIsReadable(): Unit = {
    assertEquals("timestamp 2024-05-01T10:00:00Z", Timestamp(1714557600000L, 0).describe)
    assertEquals("offset 7", Specific(7, 0).describe)
  }

  @Test def fieldsAreWhatOfTakesBack(): Unit = {
    def boxed(v: Option[Long]): java.lang.Long = v.map(java.lang.Long.valueOf).orNull
    val every = Seq(
      Specific(7, 1),
      Timestamp(1714557600000L, 1),
      Oldest(1),
      Upcoming(1),
      Custom("k", "{}", 1)
    )
    assertEquals(TypeNames, every.map(_.fields.typeName))
    every.foreach { sp =>
      val f = sp.fields
      val again = Startpoint.of(
        f.typeName,
        boxed(f.offset),
        boxed(f.timestampMs),
        f.kind.orNull,
        f.payload.orNull
      )
      assertEquals(sp.fields, again.fields)
    }
    assertEquals(
      Fields("custom", kind = Some("k"), payload = Some("{}")),
      Custom("k", "{}", 1).fields
    )
  }
}
