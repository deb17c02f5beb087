package streamctl.startpoint

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.metadata.{InMemoryMetadataStore, MetadataStore, StoreLayout}
import streamctl.startpoint.Startpoint._
import streamctl.system.{SSP, TaskName}

class StartpointManagerTest {
  private val orders0 = SSP.kafka("orders", 0)
  private val orders1 = SSP.kafka("orders", 1)
  private val rates = SSP.kafka("rates", 0) // broadcast: read by every task
  private val (t0, t1) = (TaskName("Partition 0"), TaskName("Partition 1"))
  private val mapping = Map(t0 -> Set(orders0, rates), t1 -> Set(orders1, rates))

  private val store = new InMemoryMetadataStore
  private val manager = new StartpointManager(store)
  private val ns = StoreLayout.StartpointsNamespace

  @Test def writeReadDeleteBySspAndByTaskAreSeparate(): Unit = {
    manager.write(orders0, Oldest(1))
    manager.write(orders0, t0, Specific(5, 2))
    assertEquals(Some(Oldest(1)), manager.read(orders0))
    assertEquals(Some(Specific(5, 2)), manager.read(orders0, t0))
    assertEquals(None, manager.read(orders0, t1))
    manager.delete(orders0)
    assertEquals(None, manager.read(orders0))
    assertEquals(Some(Specific(5, 2)), manager.read(orders0, t0))
    manager.delete(orders0, t0)
    assertEquals(Seq.empty, store.keys(ns))
  }

  @Test def listShowsEverythingWithItsKey(): Unit = {
    manager.write(rates, Upcoming(1))
    manager.write(orders0, t0, Timestamp(9, 2))
    assertEquals(
      Seq(
        StoredStartpoint(StartpointKey(orders0, t0), Timestamp(9, 2)),
        StoredStartpoint(StartpointKey(rates), Upcoming(1))
      ),
      manager.list()
    )
  }

  @Test def corruptValueIsAnErrorNamingTheKey(): Unit = {
    store.put(ns, "kafka/orders/0", "{oops")
    val m = assertThrows(classOf[StreamctlException], () => manager.read(orders0)).getMessage
    assertTrue(m.contains("'kafka/orders/0'") && m.contains("'startpoints'"), m)
  }

  @Test def fanOutCopiesToEveryReaderIncludingBroadcastAndRemovesTheSspKey(): Unit = {
    manager.write(orders0, Oldest(1))
    manager.write(rates, Timestamp(50, 2))
    val result = manager.fanOut(mapping)
    assertEquals(
      Map(
        (orders0, t0) -> Oldest(1),
        (rates, t0) -> Timestamp(50, 2),
        (rates, t1) -> Timestamp(50, 2)
      ),
      result.startpoints
    )
    assertEquals(Seq.empty, result.unassigned)
    assertEquals(None, manager.read(orders0))
    assertEquals(None, manager.read(rates))
    assertEquals(
      Seq("kafka/orders/0/Partition 0", "kafka/rates/0/Partition 0", "kafka/rates/0/Partition 1"),
      store.keys(ns)
    )
  }

  @Test def taskLevelStartpointWinsOverTheSspOne(): Unit = {
    manager.write(rates, Oldest(1))
    manager.write(rates, t1, Specific(3, 2))
    val result = manager.fanOut(mapping)
    assertEquals(Map((rates, t0) -> Oldest(1), (rates, t1) -> Specific(3, 2)), result.startpoints)
    assertEquals(None, manager.read(rates))
  }

  @Test def aLaterPartitionStartpointWinsOverACopyARunLeftUnapplied(): Unit = {
    // A run copies S1 to its task, then fails before its batch is logged: the copy stays.
    manager.write(orders0, Upcoming(1))
    manager.fanOut(mapping)
    // The user then asks for another start of the partition: the latest request is applied.
    manager.write(orders0, Timestamp(105, 2))
    assertEquals(Map((orders0, t0) -> Timestamp(105, 2)), manager.fanOut(mapping).startpoints)
    assertEquals(Some(Timestamp(105, 2)), manager.read(orders0, t0))
    assertEquals(None, manager.read(orders0))
    // A task-level startpoint written after the partition's keeps winning.
    manager.write(orders0, Oldest(3))
    manager.write(orders0, t0, Specific(7, 4))
    assertEquals(Map((orders0, t0) -> Specific(7, 4)), manager.fanOut(mapping).startpoints)
  }

  @Test def startpointsNoTaskReadsAreLeftAndReported(): Unit = {
    val other = SSP.kafka("other", 0)
    manager.write(other, Oldest(1))
    manager.write(orders0, t1, Upcoming(2)) // t1 does not read orders-0
    val result = manager.fanOut(mapping)
    assertEquals(Map.empty, result.startpoints)
    assertEquals(
      Seq(
        StoredStartpoint(StartpointKey(orders0, t1), Upcoming(2)),
        StoredStartpoint(StartpointKey(other), Oldest(1))
      ),
      result.unassigned.sortBy(_.key.storeKey)
    )
    assertEquals(Some(Oldest(1)), manager.read(other))
  }

  @Test def planningAFanOutWritesNothingAndNamesWhereEachStartpointComesFrom(): Unit = {
    manager.write(rates, Timestamp(50, 2))
    manager.write(rates, t1, Oldest(3))
    val before = manager.list()
    val plan = manager.planFanOut(mapping)
    assertEquals(before, manager.list(), "nothing written yet")
    assertEquals(StartpointKey(rates), plan.origin((rates, t0)))
    assertEquals(
      StartpointKey(rates, t1),
      plan.origin((rates, t1)),
      "the task-level key the user wrote wins"
    )
    assertEquals(plan.result, manager.applyFanOut(plan))
    assertEquals(Seq(StartpointKey(rates, t0), StartpointKey(rates, t1)), manager.list().map(_.key))
  }

  @Test def fanOutIsIdempotentAndPlanningItAgainFindsWhatItLeft(): Unit = {
    manager.write(rates, Oldest(1))
    manager.write(orders1, t1, Specific(4, 2))
    val first = manager.fanOut(mapping)
    val keysAfterFirst = store.keys(ns)
    assertEquals(first, manager.fanOut(mapping))
    assertEquals(keysAfterFirst, store.keys(ns))
    assertEquals(first.startpoints, manager.planFanOut(mapping).result.startpoints)
  }

  /** Fails every put after the first `allowed`, like a driver killed mid-way. */
  private class CrashingStore(under: MetadataStore, allowed: Int) extends MetadataStore {
    private var puts = 0
    def get(n: String, k: String) = under.get(n, k)
    def put(n: String, k: String, v: String): Unit = {
      puts += 1; if (puts > allowed) throw new RuntimeException("killed"); under.put(n, k, v)
    }
    def delete(n: String, k: String): Unit = under.delete(n, k)
    def keys(n: String) = under.keys(n)
  }

  @Test def crashMidFanOutThenRerunGivesTheCleanResult(): Unit = {
    val tasks = (0 until 5).map(i => TaskName(s"Partition $i"))
    val wide = tasks.map(t => t -> Set(rates, orders0)).toMap
    def seed(m: StartpointManager): Unit = {
      m.write(rates, Timestamp(7, 1)); m.write(orders0, Oldest(2));
      m.write(orders0, tasks(3), Upcoming(3))
    }

    val clean = new StartpointManager(new InMemoryMetadataStore)
    seed(clean)
    val expected = clean.fanOut(wide)

    for (crashAfter <- 0 until 9) {
      val shared = new InMemoryMetadataStore
      seed(new StartpointManager(shared))
      assertThrows(
        classOf[RuntimeException],
        () => new StartpointManager(new CrashingStore(shared, crashAfter)).fanOut(wide)
      )
      assertEquals(
        expected,
        new StartpointManager(shared).fanOut(wide),
        s"crash after $crashAfter puts"
      )
    }
  }

  @Test def crashBeforeCommitAppliesTheSameStartpointsAgain(): Unit = {
    manager.write(rates, Timestamp(7, 1))
    val planned = manager.fanOut(mapping).startpoints
    // Killed after planning, before the batch committed: nothing was removed.
    val restarted = new StartpointManager(store).fanOut(mapping).startpoints
    assertEquals(planned, restarted)
    assertEquals(Set.empty, manager.removeFannedOut(restarted))
    assertEquals(Seq.empty, store.keys(ns))
    assertEquals(Map.empty, manager.fanOut(mapping).startpoints)
  }

  @Test def removeKeepsAStartpointRewrittenSinceItWasApplied(): Unit = {
    manager.write(rates, Oldest(1))
    val applied = manager.fanOut(mapping).startpoints
    manager.write(rates, t1, Specific(9, 5)) // the user asks again while the batch runs
    assertEquals(Set((rates, t1)), manager.removeFannedOut(applied))
    assertEquals(Seq(StoredStartpoint(StartpointKey(rates, t1), Specific(9, 5))), manager.list())
  }

  @Test def corruptStartpointStopsFanOutBeforeAnythingMoves(): Unit = {
    manager.write(orders0, Oldest(1))
    store.put(ns, "kafka/rates/0", """{"type":"sideways"}""")
    val m = assertThrows(classOf[StreamctlException], () => manager.fanOut(mapping)).getMessage
    assertTrue(m.contains("'kafka/rates/0'"), m)
    // orders-0 sorts before the corrupt key, and still nothing moved.
    assertEquals(Seq("kafka/orders/0", "kafka/rates/0"), store.keys(ns))
  }

  @Test def aNonCanonicalKeyStopsFanOutInsteadOfBeingAppliedAndKept(): Unit = {
    // Read as orders-1, it would be copied to t1 and then 'kafka/orders/1' deleted, not this key.
    store.put(ns, "kafka/orders/01", StartpointJson.write(Oldest(1)))
    val m = assertThrows(classOf[StreamctlException], () => manager.fanOut(mapping)).getMessage
    assertTrue(m.contains("'kafka/orders/01'") && m.contains("'kafka/orders/1'"), m)
    assertEquals(Seq("kafka/orders/01"), store.keys(ns))
  }

  @Test def aFanOutWhoseTaskLevelKeysAreTooLongIsRefusedBeforeAnyWrite(): Unit = {
    /* 'kafka/<230 chars>/0' fits the store (242 characters once encoded); '.../0/Partition 0' does
     * not. */
    val long = SSP.kafka("z" * 230, 0)
    manager.write(orders0, Oldest(1)) // fanned out first, by key order
    manager.write(long, Oldest(2))
    val m = assertThrows(
      classOf[StreamctlException],
      () => manager.fanOut(Map(t0 -> Set(orders0, long)))
    ).getMessage
    assertEquals(Seq("kafka/orders/0", long.key), store.keys(ns), "nothing moved")
    assertTrue(
      m.contains(s"key '${long.key}'") && m.contains(s"task '$t0'") && m.contains("too long"),
      m
    )
  }

  @Test def anSspKeyRewrittenWhileItIsFannedOutIsKept(): Unit = {
    val rewritten = StartpointJson.write(Specific(7, 3))
    var rewrites = 0
    // An operator's `startpoints set` lands between fan-out's first copy and its delete.
    val racing = new InMemoryMetadataStore {
      override def put(namespace: String, key: String, value: String): Unit = {
        super.put(namespace, key, value)
        if (key == StartpointKey(orders0, t0).storeKey && rewrites == 0) {
          rewrites += 1
          super.put(namespace, StartpointKey(orders0).storeKey, rewritten)
        }
      }
    }
    val racingManager = new StartpointManager(racing)
    racingManager.write(orders0, Oldest(1))
    val result = racingManager.fanOut(mapping)
    assertEquals(1, rewrites)
    assertEquals(
      Map((orders0, t0) -> Oldest(1)),
      result.startpoints,
      "this run applies what it read"
    )
    assertEquals(Some(rewritten), racing.get(ns, StartpointKey(orders0).storeKey))
    assertEquals(Some(Oldest(1)), racingManager.read(orders0, t0))
  }

  @Test def worksOnTheFileSystemStoreWithTaskNamesWithSpaces(): Unit = {
    val dir = Files.createTempDirectory("streamctl-sp")
    val fsManager = new StartpointManager(MetadataStore.open(dir.toString, new Configuration()))
    fsManager.write(rates, Oldest(1))
    val result = fsManager.fanOut(mapping)
    assertEquals(Map((rates, t0) -> Oldest(1), (rates, t1) -> Oldest(1)), result.startpoints)
    assertEquals(
      result.startpoints,
      new StartpointManager(MetadataStore.open(
        dir.toUri.toString,
        new Configuration()
      )).planFanOut(mapping).result.startpoints
    )
    fsManager.removeFannedOut(result.startpoints)
    assertEquals(Seq.empty, fsManager.list())
  }
}
