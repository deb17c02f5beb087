package streamctl.startpoint

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.{Json, StreamctlException}
import streamctl.grouper.TaskName
import streamctl.metadata.{InMemoryMetadataStore, StoreLayout}
import streamctl.system.SSP

class StartpointCommandsTest {
  private val admin = new FakeSystemAdmin()
    .add(SSP.kafka("orders", 0), 0, Seq(10L, 20L, 30L))
    .add(SSP.kafka("orders", 1), 0, Seq(10L))
  private val store = new InMemoryMetadataStore
  private val manager = new StartpointManager(store)
  private val online = new StartpointCommands(store, Some(admin), "mem")
  private val offline = new StartpointCommands(store, None, "mem")

  private def rows(json: String) = {
    val arr = Json.parse(json, "test").get("startpoints")
    (0 until arr.size).map(arr.get)
  }

  @Test def setWithoutPartitionCoversEveryPartitionAndSaysWhereEachStarts(): Unit = {
    val out = rows(online.set("orders", null, null, Startpoint.timestamp(25)))
    assertEquals(Seq(("kafka/orders/0", 2L, false), ("kafka/orders/1", 1L, true)),
      out.map(r => (r.get("key").asText, r.get("offset").asLong, r.get("endOfPartition").asBoolean)))
    assertEquals(Set("kafka/orders/0", "kafka/orders/1"), manager.list().map(_.key.storeKey).toSet)
  }

  @Test def previewWritesNothing(): Unit = {
    val out = rows(online.preview("orders", 1, "Partition 1", Startpoint.oldest()))
    assertEquals("kafka/orders/1/Partition 1", out.head.get("key").asText)
    assertEquals(0L, out.head.get("offset").asLong)
    assertEquals(Seq.empty, manager.list())
  }

  @Test def badRequestsAreRefusedBeforeAnythingIsWritten(): Unit = {
    def err(f: => Any) = assertThrows(classOf[StreamctlException], () => f).getMessage
    assertTrue(err(online.set("orders", 5, null, Startpoint.oldest())).contains("Partition 5 of stream 'orders' does not exist (it has 2 partitions)"))
    assertTrue(err(online.set("orders", 0, null, Startpoint.specific(9))).contains("offset 9 is beyond the end"))
    assertTrue(err(offline.set("orders", null, null, Startpoint.oldest())).contains("Give a partition, or the Kafka bootstrap servers"))
    assertTrue(err(online.set("orders", 0, "", Startpoint.oldest())).contains("Empty task name"))
    assertEquals(Seq.empty, manager.list())
  }

  @Test def getListAndDeleteByFilter(): Unit = {
    offline.set("orders", 0, null, Startpoint.specific(1))
    offline.set("orders", 0, "Partition 0", Startpoint.oldest())
    offline.set("orders", 1, null, Startpoint.upcoming())
    assertTrue(offline.get("orders", 0, "Partition 0").contains("\"oldest\""))
    assertNull(offline.get("orders", 1, "Partition 1"))
    assertEquals(3, rows(offline.list()).size)
    assertEquals(Seq("kafka/orders/0/Partition 0"), rows(offline.delete("orders", 0, "Partition 0")).map(_.get("key").asText))
    assertEquals(Seq("kafka/orders/0", "kafka/orders/1"), rows(offline.delete("orders", null, null)).map(_.get("key").asText))
    assertEquals(Seq.empty, manager.list())
    assertEquals(None, manager.read(SSP.kafka("orders", 0), TaskName("Partition 0")))
  }

  @Test def aCorruptValueIsListedWithItsErrorAndCanBeDeleted(): Unit = {
    offline.set("orders", 1, null, Startpoint.oldest())
    store.put(StoreLayout.StartpointsNamespace, "kafka/orders/0", "{oops")
    val listed = rows(offline.list())
    assertEquals(Seq("kafka/orders/0", "kafka/orders/1"), listed.map(_.get("key").asText))
    assertTrue(listed.head.get("startpoint").isNull)
    assertTrue(listed.head.get("description").asText.contains("corrupt: Malformed JSON"), listed.head.toString)
    assertEquals(Seq("kafka/orders/0"), rows(offline.delete("orders", 0, null)).map(_.get("key").asText))
    assertEquals(Seq("kafka/orders/1"), manager.list().map(_.key.storeKey))
  }
}
