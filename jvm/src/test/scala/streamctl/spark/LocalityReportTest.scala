package streamctl.spark

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.grouper.TaskName
import streamctl.locality.{ExecutorId, TaskLocality, TaskLocalityStore}
import streamctl.metadata.{MetadataStore, StoreLayout}

class LocalityReportTest {
  private val conf = new Configuration()

  @Test def listsEverySourcesAssignment(): Unit = {
    val root = Files.createTempDirectory("locality-report").resolve("streamctl").toString
    val store = MetadataStore.open(root, conf)
    val a = ExecutorId("1", "host-a")
    new TaskLocalityStore(store, StoreLayout.Source("1").localityKey).save(TaskLocality(Map(TaskName("Partition 0") -> a)))
    new TaskLocalityStore(store, StoreLayout.Source("0").localityKey).save(
      TaskLocality(Map(TaskName("Partition 1") -> a, TaskName("Partition 0") -> ExecutorId("2", "host-b"))))
    assertEquals(
      """[{"source":"0","task":"Partition 0","executorId":"2","host":"host-b","location":"executor_host-b_2"},""" +
        """{"source":"0","task":"Partition 1","executorId":"1","host":"host-a","location":"executor_host-a_1"},""" +
        """{"source":"1","task":"Partition 0","executorId":"1","host":"host-a","location":"executor_host-a_1"}]""",
      LocalityReport.describe(root, conf))
  }

  @Test def aQueryWithoutAStoreHasNoAssignment(): Unit = {
    val root = Files.createTempDirectory("locality-report").resolve("never-written").toString
    assertEquals("[]", LocalityReport.describe(root, conf))
    assertFalse(Files.exists(java.nio.file.Paths.get(root)), "describing creates nothing")
  }
}
