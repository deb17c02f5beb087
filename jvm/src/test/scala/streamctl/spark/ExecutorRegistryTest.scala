package streamctl.spark

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.locality.ExecutorId

/**
 * The listener callbacks only unpack the events into `added` and `removed`; the integration tests
 * cover them.
 */
class ExecutorRegistryTest {
  @Test def followsExecutorsAddedAndRemoved(): Unit = {
    val r = new ExecutorRegistry
    r.added("2", "b")
    r.added("1", "a")
    r.added("3", "a")
    r.removed("3")
    assertEquals(Seq(ExecutorId("1", "a"), ExecutorId("2", "b")), r.live)
  }

  @Test def theDriverIsNeverAPlaceForTasks(): Unit = {
    val r = new ExecutorRegistry
    r.added("driver", "localhost")
    r.seed(Seq("driver" -> "localhost:40000"))
    assertEquals(Seq.empty, r.live)
  }

  @Test def seedAddsExecutorsRunningBeforeTheListener(): Unit = {
    val r = new ExecutorRegistry
    r.seed(Seq("driver" -> "10.0.0.1:4040", "0" -> "10.0.0.2:38211", "1" -> "10.0.0.3"))
    assertEquals(Seq(ExecutorId("0", "10.0.0.2"), ExecutorId("1", "10.0.0.3")), r.live)
  }

  @Test def aStaleSnapshotDoesNotReviveARemovedExecutor(): Unit = {
    // The listener hears of the removal before the snapshot, read a moment earlier, is applied.
    val r = new ExecutorRegistry
    r.removed("0")
    r.seed(Seq("0" -> "a:1", "1" -> "b:1"))
    assertEquals(Seq(ExecutorId("1", "b")), r.live)
  }

  @Test def anEventWinsOverTheSnapshot(): Unit = {
    val r = new ExecutorRegistry
    r.added("0", "a")
    r.seed(Seq("0" -> "other:1"))
    assertEquals(Seq(ExecutorId("0", "a")), r.live)
  }

  @Test def hostOfStripsOnlyAPort(): Unit = {
    assertEquals("10.0.0.2", ExecutorRegistry.hostOf("10.0.0.2:38211"))
    assertEquals("worker-1", ExecutorRegistry.hostOf("worker-1"))
    assertEquals("[::1]", ExecutorRegistry.hostOf("[::1]:4040"))
    assertEquals("fe80::1", ExecutorRegistry.hostOf("fe80::1"))
  }
}
