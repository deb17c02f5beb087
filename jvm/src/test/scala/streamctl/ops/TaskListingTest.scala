package streamctl.ops

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.grouper.TaskMapping
import streamctl.locality.{ExecutorId, TaskLocality, TaskLocalityStore}
import streamctl.metadata.{FileSystemMetadataStore, StoreLayout}
import streamctl.system.{SSP, TaskName}

class TaskListingTest {
  private val conf = new Configuration()

  @Test def listsEverySourceSspAndTaskInOrder(): Unit = {
    val checkpoint = Files.createTempDirectory("listing").toString
    val store = new FileSystemMetadataStore(s"$checkpoint/streamctl", conf)
    val (p0, p1) = (TaskName("Partition 0"), TaskName("Partition 1"))
    store.put(
      "grouper",
      "mapping-0",
      TaskMapping(
        Map("orders" -> 2, "rates" -> 1),
        Map(
          p1 -> Set(SSP.kafka("orders", 1), SSP.kafka("rates", 0)),
          p0 -> Set(SSP.kafka("orders", 0), SSP.kafka("orders", 2), SSP.kafka("rates", 0))
        )
      ).toJson
    )
    store.put(
      "grouper",
      "mapping-1",
      TaskMapping(Map("x" -> 1), Map(TaskName("Task 0") -> Set(SSP.kafka("x", 0)))).toJson
    )

    assertEquals(
      Seq(
        ("0", "orders", 0, "Partition 0"),
        ("0", "orders", 1, "Partition 1"),
        ("0", "orders", 2, "Partition 0"),
        ("0", "rates", 0, "Partition 0"),
        ("0", "rates", 0, "Partition 1"),
        ("1", "x", 0, "Task 0")
      ),
      TaskListing.rows(s"$checkpoint/streamctl", conf).map(r =>
        (r.source, r.stream, r.partition, r.task)
      )
    )
  }

  @Test def showsTheExecutorHostAffinityAssigned(): Unit = {
    val checkpoint = Files.createTempDirectory("listing").toString
    val store = new FileSystemMetadataStore(s"$checkpoint/streamctl", conf)
    val (p0, p1) = (TaskName("Partition 0"), TaskName("Partition 1"))
    store.put(
      "grouper",
      "mapping-0",
      TaskMapping(
        Map("orders" -> 2),
        Map(
          p0 -> Set(SSP.kafka("orders", 0)),
          p1 -> Set(SSP.kafka("orders", 1))
        )
      ).toJson
    )
    new TaskLocalityStore(
      store,
      StoreLayout.Source("0").localityKey
    ).save(TaskLocality(Map(p1 -> ExecutorId("3", "host-a"))))

    val rows = TaskListing.rows(s"$checkpoint/streamctl", conf)
    assertEquals(None, rows(0).executor, "a task without an assignment has no executor")
    assertEquals(Some("executor_host-a_3"), rows(1).executor)
  }

  @Test def aStoreWithoutMappingIsAClearError(): Unit = {
    val empty = Files.createTempDirectory("listing").toString
    val e = assertThrows(
      classOf[StreamctlException],
      () => { TaskListing.rows(s"$empty/streamctl", conf); () }
    )
    assertTrue(
      e.getMessage.contains("No task mapping") && e.getMessage.contains(empty),
      e.getMessage
    )
  }
}
