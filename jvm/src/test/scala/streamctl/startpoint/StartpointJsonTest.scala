package streamctl.startpoint

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.{Json, StreamctlException}
import streamctl.startpoint.Startpoint._

class StartpointJsonTest {
  private val key = "metadata store key 'kafka/orders/3'"

  @Test def everyTypeRoundTrips(): Unit =
    for (
      sp <- Seq(
        Specific(0, 1),
        Specific(Long.MaxValue, 2),
        Timestamp(1714557600000L, 3),
        Oldest(4),
        Upcoming(5),
        Custom("kafka.txn", """{"marker":"Zürich ✓","n":[1,2]}""", 6),
        Custom("empty", "", 7)
      )
    )
      assertEquals(sp, StartpointJson.read(StartpointJson.write(sp), key))

  @Test def storedFormHasTypeCreationTimeAndVersion(): Unit = {
    val node = Json.parse(StartpointJson.write(Timestamp(1000, 42)), "test")
    assertEquals("timestamp", node.get("type").asText)
    assertEquals(42L, node.get("creationTime").asLong)
    assertEquals(1000L, node.get("timestamp").asLong)
    assertEquals(1, node.get("version").asInt)
  }

  private def error(text: String): String =
    assertThrows(classOf[StreamctlException], () => StartpointJson.read(text, key)).getMessage

  @Test def unknownTypeNamesTheKeyAndType(): Unit = {
    val m = error("""{"version":1,"type":"latest-ish","creationTime":1}""")
    assertTrue(m.contains(key) && m.contains("'latest-ish'"), m)
  }

  @Test def malformedJsonNamesTheKey(): Unit =
    for (text <- Seq("{not json", "", "[1,2]", "42", """{"version":1,"type":"oldest""""))
      assertTrue(error(text).contains(key), s"$text -> ${error(text)}")

  @Test def missingOrMistypedFieldsNameTheField(): Unit = {
    assertTrue(error("""{"version":1,"type":"specific","creationTime":1}""").contains("'offset'"))
    assertTrue(error(
      """{"version":1,"type":"specific","creationTime":1,"offset":"12"}"""
    ).contains("'offset' must be a whole number"))
    assertTrue(error(
      """{"version":1,"type":"specific","creationTime":1,"offset":1.5}"""
    ).contains("'offset'"))
    assertTrue(error("""{"version":1,"type":"oldest"}""").contains("'creationTime'"))
    assertTrue(
      error("""{"version":1,"type":7,"creationTime":1}""").contains("'type' must be a string")
    )
    assertTrue(error("""{"type":"oldest","creationTime":1}""").contains("'version'"))
    // A field the type does not use is still checked: a mistyped one is corruption, not noise.
    assertTrue(error(
      """{"version":1,"type":"oldest","creationTime":1,"offset":"12"}"""
    ).contains("'offset' must be a whole number"))
  }

  @Test def theStoredTypeNameIsTakenAsWritten(): Unit = {
    val m = error("""{"version":1,"type":"Specific","creationTime":1,"offset":3}""")
    assertTrue(m.contains(key) && m.contains("'Specific'"), m)
  }

  @Test def ruleBreakingValuesAreCorruptionNamingTheKey(): Unit = {
    val m = error("""{"version":1,"type":"specific","creationTime":1,"offset":-3}""")
    assertTrue(m.contains(key) && m.contains("-3"), m)
  }

  @Test def newerVersionIsRefusedNotGuessed(): Unit = {
    val m = error("""{"version":2,"type":"oldest","creationTime":1}""")
    assertTrue(m.contains("version 2") && m.contains(key), m)
  }
}
