package streamctl.locality

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.metadata.{MetadataStore, StoreLayout}
import streamctl.system.TaskName

class LocalityListingTest {
  private val conf = new Configuration()

  @Test def listsEverySourcesAssignment(): Unit = {
    val root = Files.createTempDirectory("locality-report").resolve("streamctl").toString
    val store = MetadataStore.open(root, conf)
    val a = ExecutorId("1", "host-a")
    new TaskLocalityStore(
      store,
      StoreLayout.Source("1").localityKey
    ).save(TaskLocality(Map(TaskName("Partition 0") -> a)))
    new TaskLocalityStore(store, StoreLayout.Source("0").localityKey).save(
      TaskLocality(Map(
        TaskName("Partition 1") -> a,
        TaskName("Partition 0") -> ExecutorId("2", "host-b")
      ))
    )
    assertEquals(
      Seq(
        LocalityRow("0", "Partition 0", "2", "host-b", "executor_host-b_2"),
        LocalityRow("0", "Partition 1", "1", "host-a", "executor_host-a_1"),
        LocalityRow("1", "Partition 0", "1", "host-a", "executor_host-a_1")
      ),
      LocalityListing.rows(root, conf)
    )
  }

  @Test def aQueryWithoutAStoreHasNoAssignment(): Unit = {
    val root = Files.createTempDirectory("locality-report").resolve("never-written").toString
    assertEquals(Seq.empty, LocalityListing.rows(root, conf))
    assertFalse(Files.exists(java.nio.file.Paths.get(root)), "describing creates nothing")
  }
}
