package streamctl.control

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.metadata.{InMemoryMetadataStore, MetadataStore, StoreLayout}
import streamctl.system.{SSP, TaskName}

class BatchResultsTest {
  private val m0 = SSP.kafka("mid", 0)
  private val namespace = StoreLayout.Source("0").controlNamespace
  private val t0 = TaskName("Partition 0")
  private val t1 = TaskName("Partition 1")
  private val t2 = TaskName("Partition 2")

  /** A store that counts its writes. */
  private final class Counting extends InMemoryMetadataStore {
    var puts = 0
    override def put(namespace: String, key: String, value: String): Unit = {
      puts += 1
      super.put(namespace, key, value)
    }
  }

  private def ended(producer: String): SspControlStates.States =
    Map(m0 -> SspControlState.empty(EndOfStreamMessage(producer, 1), m0, 0).state)

  private def results(store: MetadataStore) = new ControlResults(store, namespace)

  @Test def theLastReportWritesTheBatchAsOneValueBeforeAnyoneAsks(): Unit = {
    val store = new Counting
    val collected = new BatchResults(results(store))
    collected.expect(4, Seq(t0, t1, t2))
    collected.reported(4, t0, Some(ended("p0")))
    collected.reported(4, t1, None)
    assertEquals(0, store.puts, "nothing is written before every task reported")
    assertFalse(collected.settled(4))
    collected.reported(4, t2, Some(ended("p1")))
    assertEquals(1, store.puts)
    assertTrue(collected.settled(4))
    // What a restarted driver reads back, without this run's collection.
    assertEquals(
      Map("Partition 0" -> ended("p0"), "Partition 2" -> ended("p1")),
      results(store).load(4).toMap
    )
    assertEquals(Some(results(store).load(4).toMap), collected.of(4).map(_.toMap))
    assertEquals(1, store.puts, "asking again writes nothing")
  }

  @Test def aTaskReportedTwiceCountsOnceAndABatchWithoutChangesWritesNothing(): Unit = {
    val store = new Counting
    val collected = new BatchResults(results(store))
    collected.expect(1, Seq(t0, t1))
    collected.reported(1, t0, None)
    collected.reported(1, t0, None)
    assertFalse(collected.settled(1), "a speculative attempt is not another task")
    collected.reported(1, t1, None)
    assertEquals(Some(Nil), collected.of(1))
    assertEquals(0, store.puts)
    collected.reported(0, t0, Some(ended("late"))) // an older batch's attempt: ignored
    collected.expect(2, Seq(t0))
    collected.reported(2, t0, Some(ended("p0")))
    collected.reported(2, t0, Some(ended("p0")))
    assertEquals(1, store.puts)
    assertEquals(None, collected.of(1), "another batch: the store has it")
  }

  @Test def resultsAJobLeftIncompleteAreWrittenBeforeTheyAreUsed(): Unit = {
    val store = new Counting
    val collected = new BatchResults(results(store))
    collected.expect(3, Seq(t0, t1))
    collected.reported(3, t0, Some(ended("p0")))
    assertEquals(Some(Seq("Partition 0" -> ended("p0"))), collected.of(3))
    assertEquals(Seq("Partition 0" -> ended("p0")), results(store).load(3))
  }

  @Test def loadReadsBatchValuesAndRealTimeReadersKeysAlike(): Unit = {
    val store = new InMemoryMetadataStore
    val r = results(store)
    r.putBatch(5, Seq("Partition 1" -> ended("p1"), "Partition 0" -> ended("p0")))
    r.put(5, t2, ended("p2"))
    r.put(6, t2, ended("p3"))
    r.putBatch(50, Seq("Partition 0" -> ended("p9")))
    assertEquals(
      Map(
        "Partition 0" -> ended("p0"),
        "Partition 1" -> ended("p1"),
        "Partition 2" -> ended("p2")
      ),
      r.load(5).toMap
    )
    r.deleteBefore(6)
    assertEquals(Nil, r.load(5))
    assertEquals(Seq("6/Partition 2", "50"), store.keys(namespace).sortBy(_.length).reverse)
  }
}
