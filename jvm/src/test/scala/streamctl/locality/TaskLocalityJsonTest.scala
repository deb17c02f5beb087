package streamctl.locality

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.StreamctlException
import streamctl.system.TaskName

class TaskLocalityJsonTest {
  private val a = ExecutorId("1", "host-a")
  private val b = ExecutorId("2", "host-b")
  private val locality = TaskLocality(
    Map(TaskName("Partition 1") -> a, TaskName("Partition 0") -> b),
    Map(TaskName("Partition 0") -> ExecutorId("3", "host-c"))
  )

  @Test def roundTrips(): Unit =
    assertEquals(locality, TaskLocality.fromJson(locality.toJson, "k"))

  @Test def emptyRoundTrips(): Unit =
    assertEquals(TaskLocality.empty, TaskLocality.fromJson(TaskLocality.empty.toJson, "k"))

  @Test def textIsStableWhateverTheMapOrder(): Unit = {
    val reordered = TaskLocality(locality.placement.toSeq.reverse.toMap, locality.homes)
    assertEquals(locality.toJson, reordered.toJson)
    assertEquals(
      """{"version":1,"placement":{"Partition 0":{"id":"2","host":"host-b"},"Partition 1":{"id":"1","host":"host-a"}},""" +
        """"homes":{"Partition 0":{"id":"3","host":"host-c"}}}""",
      locality.toJson
    )
  }

  private def failure(text: String): String =
    assertThrows(
      classOf[StreamctlException],
      () => TaskLocality.fromJson(text, "locality/q1")
    ).getMessage

  @Test def malformedJsonNamesTheKey(): Unit =
    assertTrue(failure("""{"version":1,"placement":""").contains("'locality/q1'"))

  @Test def missingFieldNamesKeyAndField(): Unit = {
    val m = failure("""{"version":1,"placement":{}}""")
    assertTrue(m.contains("'locality/q1'") && m.contains("'homes'"), m)
  }

  @Test def badExecutorNamesKeyAndTask(): Unit = {
    val m = failure("""{"version":1,"placement":{"Partition 4":{"id":7,"host":"h"}},"homes":{}}""")
    assertTrue(m.contains("'locality/q1'") && m.contains("'Partition 4'") && m.contains("'id'"), m)
    val empty =
      failure("""{"version":1,"placement":{},"homes":{"Partition 5":{"id":"","host":"h"}}}""")
    assertTrue(empty.contains("'locality/q1'") && empty.contains("'Partition 5'"), empty)
  }

  @Test def newerVersionIsRefused(): Unit = {
    val m = failure("""{"version":2,"placement":{},"homes":{}}""")
    assertTrue(m.contains("'locality/q1'") && m.contains("version 2"), m)
  }

  @Test def notAnObjectIsRefused(): Unit =
    assertTrue(failure("[1,2]").contains("'locality/q1'"))
}
