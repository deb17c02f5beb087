package streamctl.system

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

// No broker needed: a producer is created without connecting, and closing is observable
// as the IllegalStateException that send throws (what tasks sharing it used to hit).
class ProducerPoolTest {
  private val params = KafkaParams(Map("bootstrap.servers" -> "127.0.0.1:1", "client.id" -> s"pool-${System.nanoTime}",
    "max.block.ms" -> "100"))

  private def closed(p: ProducerPool.Producer): Boolean =
    try { p.send(new org.apache.kafka.clients.producer.ProducerRecord[Array[Byte], Array[Byte]]("x", Array[Byte]())); false }
    catch { case _: IllegalStateException => true; case _: Exception => false }

  @Test def tasksWithTheSameSettingsShareOneProducer(): Unit = {
    val a = ProducerPool.acquire(params)
    val b = ProducerPool.acquire(params)
    assertSame(a, b)
    ProducerPool.release(params, a, failed = false)
    ProducerPool.release(params, b, failed = false)
    val c = ProducerPool.acquire(params)
    assertSame(a, c, "a healthy producer stays pooled")
    ProducerPool.release(params, c, failed = true)
  }

  @Test def aFailedProducerIsClosedOnlyAfterItsLastUser(): Unit = {
    val p = Map("bootstrap.servers" -> "127.0.0.1:1", "client.id" -> s"pool-fail-${System.nanoTime}",
      "max.block.ms" -> "100")
    val kp = KafkaParams(p)
    val a = ProducerPool.acquire(kp)
    val b = ProducerPool.acquire(kp)
    ProducerPool.release(kp, a, failed = true)
    assertFalse(closed(b), "another task still sends through it")
    val fresh = ProducerPool.acquire(kp)
    assertNotSame(a, fresh, "later tasks get a new producer")
    ProducerPool.release(kp, b, failed = false)
    assertTrue(closed(a), "closed once its last user released it")
    ProducerPool.release(kp, fresh, failed = true)
  }
}
