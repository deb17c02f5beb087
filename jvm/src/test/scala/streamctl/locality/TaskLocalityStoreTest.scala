package streamctl.locality

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import scala.collection.mutable
import streamctl.StreamctlException
import streamctl.metadata.MetadataStore
import streamctl.system.TaskName

class TaskLocalityStoreTest {
  private class MemoryStore extends MetadataStore {
    val values = mutable.Map.empty[(String, String), String]
    def get(namespace: String, key: String): Option[String] = values.get((namespace, key))
    def put(namespace: String, key: String, value: String): Unit = values((namespace, key)) = value
    def delete(namespace: String, key: String): Unit = values.remove((namespace, key))
    def keys(namespace: String): Seq[String] =
      values.keys.filter(_._1 == namespace).map(_._2).toSeq.sorted
  }

  @Test def absentIsEmpty(): Unit =
    assertEquals(TaskLocality.empty, new TaskLocalityStore(new MemoryStore, "assignment").load())

  @Test def savesUnderTheLocalityNamespace(): Unit = {
    val memory = new MemoryStore
    val store = new TaskLocalityStore(memory, "assignment")
    val locality = TaskLocality(Map(TaskName("Partition 0") -> ExecutorId("1", "h")))
    store.save(locality)
    assertEquals(Seq("assignment"), memory.keys("locality"))
    assertEquals(locality, store.load())
  }

  @Test def corruptValueNamesTheStoreKey(): Unit = {
    val memory = new MemoryStore
    memory.put("locality", "assignment", "{nope")
    val e = assertThrows(
      classOf[StreamctlException],
      () => new TaskLocalityStore(memory, "assignment").load()
    )
    assertTrue(e.getMessage.contains("'locality/assignment'"), e.getMessage)
  }
}
