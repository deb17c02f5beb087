package streamctl.grouper

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.StreamctlException
import streamctl.system.{SSP, TaskName}

class TaskMappingJsonTest {
  private def p(n: Int) = TaskName(s"Partition $n")
  private val small = TaskMapping(
    Map("orders" -> 2),
    Map(
      p(0) -> Set(SSP.kafka("orders", 2), SSP.kafka("orders", 0)),
      p(1) -> Set(SSP.kafka("orders", 1))
    )
  )

  @Test def exactForm(): Unit =
    assertEquals(
      """{"version":1,"initialPartitionCounts":{"orders":2},""" +
        """"tasks":{"Partition 0":["kafka/orders/0","kafka/orders/2"],"Partition 1":["kafka/orders/1"]}}""",
      small.toJson
    )

  /**
   * `orders` with 24 partitions in 12 tasks (grown from 12), `rates` with 3 partitions read by
   * every task.
   */
  private val broadcastMapping = {
    val rates = (0 until 3).map(SSP.kafka("rates", _)).toSet
    TaskMapping(
      Map("orders" -> 12, "rates" -> 2),
      (0 until 12).map(i =>
        p(i) -> (Set(SSP.kafka("orders", i), SSP.kafka("orders", i + 12)) ++ rates)
      ).toMap
    )
  }

  @Test def roundTripWithBroadcastAndManyTasks(): Unit = {
    val back = TaskMapping.fromJson(broadcastMapping.toJson, "test")
    assertEquals(broadcastMapping, back)
    assertEquals(broadcastMapping.toJson, back.toJson)
    assertEquals((0 until 12).map(p).toSet, back.tasksOf(SSP.kafka("rates", 2)))
    assertEquals(Set(p(5)), back.tasksOf(SSP.kafka("orders", 17)))
    assertEquals(Map("orders" -> 24, "rates" -> 3), back.partitionCounts)
  }

  @Test def outputIsSortedWhateverTheBuildOrder(): Unit = {
    val reordered = TaskMapping(small.initialPartitionCounts, small.taskSsps.toSeq.reverse.toMap)
    assertEquals(small.toJson, reordered.toJson)
    val many = broadcastMapping.toJson
    assertTrue(many.indexOf("\"Partition 2\"") < many.indexOf("\"Partition 10\""), many)
    assertTrue(many.indexOf("\"kafka/orders/2\"") < many.indexOf("\"kafka/orders/14\""), many)
  }

  @Test def emptyMappingRoundTrips(): Unit =
    assertEquals(TaskMapping.empty, TaskMapping.fromJson(TaskMapping.empty.toJson, "test"))

  private def malformed(json: String, fragments: String*): Unit = {
    val e = assertThrows(
      classOf[StreamctlException],
      () => { TaskMapping.fromJson(json, "grouper/mapping"); () }
    )
    assertTrue(e.getMessage.contains("task mapping (grouper/mapping)"), e.getMessage)
    fragments.foreach(f => assertTrue(e.getMessage.contains(f), s"'$f' not in: ${e.getMessage}"))
  }

  private val counts = """"initialPartitionCounts":{"orders":2}"""

  @Test def malformedInputNamesTheKey(): Unit = {
    malformed("{not json", "Malformed JSON")
    malformed("", "Empty JSON")
    malformed("[1,2]", "expected a JSON object")
    malformed(s"""{$counts,"tasks":{}}""", "Missing field 'version'")
    malformed(s"""{"version":"1",$counts,"tasks":{}}""", "must be a whole number from 1, not \"1\"")
    malformed(
      s"""{"version":2,$counts,"tasks":{}}""",
      "version 2, newer than this streamctl reads (up to 1)"
    )
    malformed("""{"version":1,"tasks":{}}""", "Missing field 'initialPartitionCounts'")
    malformed(
      """{"version":1,"initialPartitionCounts":{"orders":0},"tasks":{}}""",
      "initialPartitionCounts.'orders'"
    )
    malformed(
      """{"version":1,"initialPartitionCounts":[],"tasks":{}}""",
      "'initialPartitionCounts' is not a JSON object"
    )
    malformed(s"""{"version":1,$counts}""", "Missing field 'tasks'")
    malformed(
      s"""{"version":1,$counts,"tasks":{"Partition 0":"kafka/orders/0"}}""",
      "tasks.'Partition 0' is not an array"
    )
    malformed(
      s"""{"version":1,$counts,"tasks":{"Partition 0":[]}}""",
      "tasks.'Partition 0' has no SSPs"
    )
    malformed(
      s"""{"version":1,$counts,"tasks":{"Partition 0":["kafka/orders/0",7]}}""",
      "tasks.'Partition 0'[1] is not a string"
    )
    malformed(
      s"""{"version":1,$counts,"tasks":{"Partition 0":["kafka/orders"]}}""",
      "tasks.'Partition 0'[0]",
      "'kafka/orders'"
    )
    malformed(
      s"""{"version":1,$counts,"tasks":{"P":["kafka/users/0"]}}""",
      "kafka/users/0",
      "no stream 'users'"
    )
  }
}
