package streamctl.ops

import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}

import scala.jdk.CollectionConverters._

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.Eventually.{eventually, threadAlive}
import streamctl.metadata.{InMemoryMetadataStore, StoreLayout}
import streamctl.system.SSP

class ProgressRecorderTest {
  private val source = StoreLayout.Source("0")
  private val p0 = SSP.kafka("o", 0)

  private def summary(b: Long) = BatchSummary(
    b,
    b * 1000,
    Map("o" -> 1L),
    Map(p0 -> 0L),
    None,
    None,
    endOfStream = false,
    Nil,
    0,
    positions = Map(p0 -> b)
  )

  /**
   * A store whose writes wait until `gate` opens (2 s at most: a caller it held up fails the test
   * rather than hanging it); the keys it wrote, in order.
   */
  private class GatedStore(gate: CountDownLatch) extends InMemoryMetadataStore {
    val written = new ConcurrentLinkedQueue[String]()
    override def put(namespace: String, key: String, value: String): Unit = {
      gate.await(2, TimeUnit.SECONDS)
      written.add(key)
      super.put(namespace, key, value)
    }
  }

  private def keys(batches: Seq[Long]) = batches.map(source.progressKey)

  @Test def aStoreThatBlocksHoldsUpNeitherTheCallerNorTheOrder(): Unit = {
    val gate = new CountDownLatch(1)
    val store = new GatedStore(gate)
    val committed = new ConcurrentLinkedQueue[Map[SSP, Long]]()
    val recorder = new ProgressRecorder("blocked", () => store, source, p => committed.add(p))
    val started = System.nanoTime()
    (1L to 5L).foreach(b => recorder.record(summary(b)))
    val tookMs = (System.nanoTime() - started) / 1000000
    assertTrue(tookMs < 1000, s"recording waited $tookMs ms for the store")
    gate.countDown()
    eventually("five entries")(store.written.size == 5)
    assertEquals(keys(1L to 5L), store.written.asScala.toSeq)
    eventually("the last batch's positions committed")(
      committed.asScala.lastOption.contains(Map(p0 -> 5L))
    )
    recorder.close()
  }

  @Test def whatIsQueuedWhenTheSourceStopsIsKeptAndSoIsALateBatch(): Unit = {
    val gate = new CountDownLatch(1)
    val store = new GatedStore(gate)
    val who = s"stopping-${System.nanoTime}"
    val thread = s"streamctl-progress-$who"
    val recorder = new ProgressRecorder(who, () => store, source, _ => ())
    recorder.record(summary(1))
    recorder.record(summary(2))
    recorder.close()
    gate.countDown()
    eventually("the queued entries kept and the thread ended")(
      store.written.size == 2 && !threadAlive(_ == thread)
    )
    // The last batch's report comes after its source stopped.
    recorder.record(summary(3))
    eventually("the late entry kept and its thread ended")(
      store.written.size == 3 && !threadAlive(_ == thread)
    )
    assertEquals(keys(1L to 3L), store.written.asScala.toSeq)
  }

  @Test def aBacklogKeepsItsOrderAndWhatTheHistoryKeeps(): Unit = {
    def queue(batches: Seq[Long]) =
      batches.foldLeft(Vector.empty[BatchSummary])((q, b) => ProgressRecorder.queued(q, summary(b)))
        .map(_.batchId)
    val limit = ProgressHistory.Limit.toLong
    assertEquals((10L until limit + 10).toVector, queue(0L until limit + 10))
    // Batches far apart (a report of no new data keeps no entry): only the ones too far behind go.
    assertEquals(Vector(100L, 300L), queue(Seq(0L, 100L, 300L)))
  }
}
