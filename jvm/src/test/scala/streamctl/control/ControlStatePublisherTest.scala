package streamctl.control

import java.util.concurrent.{CountDownLatch, ThreadPoolExecutor, TimeUnit}
import java.util.concurrent.atomic.AtomicReference

import scala.collection.mutable

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.Eventually.eventually
import streamctl.metadata.{InMemoryMetadataStore, StoreLayout}
import streamctl.system.{SSP, TaskName}

class ControlStatePublisherTest {
  private val mid = SSP.kafka("mid", 0)
  private val results =
    new ControlResults(new InMemoryMetadataStore, StoreLayout.Source("0").controlNamespace)

  private def watermark(ts: Long): SspControlStates.States =
    Map(mid -> SspControlState.empty(WatermarkMessage("up", 1, ts), mid, ts).state)

  private def recorded(seq: Long): Option[Long] =
    results.load(seq).headOption.flatMap(_._2.get(mid)).flatMap(_.watermark)

  /**
   * Whether a writer thread has finished its work: waiting in its pool for the next, or gone (idle
   * threads time out).
   */
  private def backInPool(t: Thread): Boolean = t.getState match {
    case Thread.State.TERMINATED => true
    case Thread.State.WAITING | Thread.State.TIMED_WAITING =>
      t.getStackTrace.exists(f =>
        f.getClassName == classOf[ThreadPoolExecutor].getName && f.getMethodName == "getTask"
      )
    case _ => false
  }

  @Test def theNewestStatesAreWrittenAfterTheWritersFlushedAndTheReaderNeverWaits(): Unit = {
    val p = new ControlStatePublisher(results, TaskName("Partition 0"))
    val events = mutable.ArrayBuffer.empty[String]
    val (flushing, release) = (new CountDownLatch(1), new CountDownLatch(1))
    /* The first flush blocks (a slow broker): publishing must not, and later states replace each
     * other. */
    p.publish(
      1,
      watermark(10),
      () => {
        flushing.countDown()
        release.await(60, TimeUnit.SECONDS)
        events.synchronized(events += "flush 10")
      }
    )
    assertTrue(flushing.await(60, TimeUnit.SECONDS))
    p.publish(1, watermark(20), () => events.synchronized(events += "flush 20"))
    p.publish(1, watermark(30), () => events.synchronized(events += "flush 30"))
    assertEquals(None, recorded(1), "nothing is written before its flush returned")
    release.countDown()
    eventually("the newest states are written", seconds = 60)(recorded(1).contains(30L))
    assertEquals(
      Seq("flush 10", "flush 30"),
      events.synchronized(events.toSeq),
      "states replaced while a write ran are skipped"
    )
  }

  @Test def statesWhoseFlushFailedAreNotWrittenAndCloseDropsWhatIsPending(): Unit = {
    val p = new ControlStatePublisher(results, TaskName("Partition 0"))
    val tried = new CountDownLatch(1)
    p.publish(
      2,
      watermark(10),
      () => { tried.countDown(); throw new IllegalStateException("send failed") }
    )
    assertTrue(tried.await(60, TimeUnit.SECONDS))
    val (flushing, release) = (new CountDownLatch(1), new CountDownLatch(1))
    val writer = new AtomicReference[Thread]
    p.publish(
      2,
      watermark(20),
      () => {
        writer.set(Thread.currentThread())
        flushing.countDown()
        release.await(60, TimeUnit.SECONDS)
      }
    )
    /* A publisher writes one state at a time: the next flush starts only once the failed one was
     * handled. */
    assertTrue(flushing.await(60, TimeUnit.SECONDS))
    assertEquals(None, recorded(2), "a flush that failed: its states are not written")
    p.publish(2, watermark(30), () => ())
    p.close()
    release.countDown()
    eventually("the running write completes", seconds = 60)(recorded(2).exists(_ >= 20L))
    /* The thread that wrote 20 would write 30 next, were it kept; back in its pool, it has taken
     * nothing more. */
    eventually("the writer went back to its pool", seconds = 60)(backInPool(writer.get))
    assertEquals(
      Some(20L),
      recorded(2),
      "what was pending at close is dropped (the end offset carries the final states)"
    )
  }
}
