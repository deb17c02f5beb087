package streamctl.startpoint

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.metadata.{InMemoryMetadataStore, StoreLayout}
import streamctl.system.{SSP, TaskName}

class StartpointCommandsTest {
  private val admin = new FakeSystemAdmin()
    .add(SSP.kafka("orders", 0), 0, Seq(10L, 20L, 30L))
    .add(SSP.kafka("orders", 1), 0, Seq(10L))
  private val store = new InMemoryMetadataStore
  private val manager = new StartpointManager(store)
  private val online = new StartpointCommands(store, Some(admin), "mem")
  private val offline = new StartpointCommands(store, None, "mem")

  @Test def setWithoutPartitionCoversEveryPartitionAndSaysWhereEachStarts(): Unit = {
    val out = online.set("orders", None, None, Startpoint.timestamp(25))
    assertEquals(
      Seq(("kafka/orders/0", 2L, false), ("kafka/orders/1", 1L, true)),
      out.map(e => (e.key.storeKey, e.resolution.get.offset, e.resolution.get.beyondData))
    )
    assertEquals(Set("kafka/orders/0", "kafka/orders/1"), manager.list().map(_.key.storeKey).toSet)
  }

  @Test def previewWritesNothing(): Unit = {
    val out = online.preview("orders", Some(1), Some(TaskName("Partition 1")), Startpoint.oldest())
    assertEquals("kafka/orders/1/Partition 1", out.head.key.storeKey)
    assertEquals(Some(0L), out.head.resolution.map(_.offset))
    assertEquals(Seq.empty, manager.list())
  }

  @Test def badRequestsAreRefusedBeforeAnythingIsWritten(): Unit = {
    def err(f: => Any) = assertThrows(classOf[StreamctlException], () => f).getMessage
    assertEquals(
      "Partition 5 of stream 'orders' does not exist (setting a startpoint): it has 2 partitions (0..1)",
      err(online.set("orders", Some(5), None, Startpoint.oldest()))
    )
    assertEquals(
      "Partition -1 of stream 'orders' does not exist (setting a startpoint): it has 2 partitions (0..1)",
      err(online.preview("orders", Some(-1), None, Startpoint.oldest()))
    )
    /* Without a broker only the count is unknown: a negative partition is refused all the same, by
     * every command. */
    assertEquals(
      "Partition -1 of stream 'orders' does not exist (setting a startpoint): partitions are numbered from 0",
      err(offline.set("orders", Some(-1), None, Startpoint.oldest()))
    )
    assertTrue(err(offline.get(
      "orders",
      -1,
      None
    )).startsWith("Partition -1 of stream 'orders' does not exist (reading a startpoint)"))
    assertTrue(err(offline.delete(
      "orders",
      Some(-1),
      None
    )).startsWith("Partition -1 of stream 'orders' does not exist (deleting startpoints)"))
    assertTrue(err(online.set(
      "orders",
      Some(0),
      None,
      Startpoint.specific(9)
    )).contains("offset 9 is beyond the end"))
    assertTrue(err(offline.set(
      "orders",
      None,
      None,
      Startpoint.oldest()
    )).contains("Give a partition, or the Kafka bootstrap servers"))
    assertTrue(err(online.set(
      "orders",
      Some(0),
      TaskName.given("", "orders"),
      Startpoint.oldest()
    )).contains("Empty task name"))
    assertEquals(Seq.empty, manager.list())
  }

  @Test def getListAndDeleteByFilter(): Unit = {
    offline.set("orders", Some(0), None, Startpoint.specific(1))
    offline.set("orders", Some(0), Some(TaskName("Partition 0")), Startpoint.oldest())
    offline.set("orders", Some(1), None, Startpoint.upcoming())
    assertTrue(offline.get(
      "orders",
      0,
      Some(TaskName("Partition 0"))
    ).exists(_.isInstanceOf[Startpoint.Oldest]))
    assertEquals(None, offline.get("orders", 1, Some(TaskName("Partition 1"))))
    assertEquals(3, offline.list().size)
    assertEquals(
      Seq("kafka/orders/0/Partition 0"),
      offline.delete("orders", Some(0), Some(TaskName("Partition 0"))).map(_.key.storeKey)
    )
    assertEquals(
      Seq("kafka/orders/0", "kafka/orders/1"),
      offline.delete("orders", None, None).map(_.key.storeKey)
    )
    assertEquals(Seq.empty, manager.list())
    assertEquals(None, manager.read(SSP.kafka("orders", 0), TaskName("Partition 0")))
  }

  @Test def aStartpointIsMadeFromItsTypeNameAndFields(): Unit = {
    assertEquals(
      Startpoint.Specific(7, 0),
      Startpoint.of(
        "specific",
        7L,
        null,
        null,
        null
      ).asInstanceOf[Startpoint.Specific].copy(creationTimeMs = 0)
    )
    assertTrue(Startpoint.of(" Oldest ", null, null, null, null).isInstanceOf[Startpoint.Oldest])
    def err(f: => Any) = assertThrows(classOf[StreamctlException], () => f).getMessage
    assertEquals(
      "A 'timestamp' startpoint needs 'timestamp'",
      err(Startpoint.of("timestamp", 7L, null, null, null))
    )
    assertEquals(
      "Unknown startpoint type 'latest' (known: specific, timestamp, oldest, upcoming, custom)",
      err(Startpoint.of("latest", null, null, null, null))
    )
  }

  @Test def aCorruptValueIsListedWithItsErrorAndCanBeDeleted(): Unit = {
    offline.set("orders", Some(1), None, Startpoint.oldest())
    store.put(StoreLayout.StartpointsNamespace, "kafka/orders/0", "{oops")
    val listed = offline.list()
    assertEquals(Seq("kafka/orders/0", "kafka/orders/1"), listed.map(_.key.storeKey))
    assertTrue(listed.head.startpoint.isLeft)
    assertTrue(listed.head.description.contains("corrupt: Malformed JSON"), listed.head.toString)
    assertEquals(Seq("kafka/orders/0"), offline.delete("orders", Some(0), None).map(_.key.storeKey))
    assertEquals(Seq("kafka/orders/1"), manager.list().map(_.key.storeKey))
  }

  @Test def aNonCanonicalKeyIsListedAsCorruptAndDeletedUnderItsOwnKey(): Unit = {
    offline.set("orders", Some(1), None, Startpoint.oldest())
    // Written by hand: it names partition 3, but no command or fan-out acts on 'kafka/orders/03'.
    store.put(
      StoreLayout.StartpointsNamespace,
      "kafka/orders/03",
      StartpointJson.write(Startpoint.Oldest(1))
    )
    val listed = offline.list()
    assertEquals(Seq("kafka/orders/03", "kafka/orders/1"), listed.map(_.storeKey))
    val bad = listed.head
    assertEquals(SSP.kafka("orders", 3), bad.key.ssp)
    assertTrue(
      bad.description.contains("'kafka/orders/03'") && bad.description.contains("'kafka/orders/3'"),
      bad.description
    )
    assertTrue(bad.startpoint.isLeft)
    assertEquals(Seq("kafka/orders/03"), offline.delete("orders", Some(3), None).map(_.storeKey))
    assertEquals(Seq("kafka/orders/1"), store.keys(StoreLayout.StartpointsNamespace))
  }
}
