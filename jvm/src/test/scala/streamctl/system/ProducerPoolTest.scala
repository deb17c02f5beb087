package streamctl.system

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

// No broker needed: a producer is created without connecting, and closing is observable
// as the IllegalStateException that send throws.
class ProducerPoolTest {
  private def params(name: String) = KafkaParams(Map(
    "bootstrap.servers" -> "127.0.0.1:1",
    "client.id" -> s"pool-$name-${System.nanoTime}",
    "max.block.ms" -> "100"
  ))

  private def closed(p: ProducerPool.Producer): Boolean =
    try {
      p.send(new org.apache.kafka.clients.producer.ProducerRecord[Array[Byte], Array[Byte]](
        "x",
        Array[Byte]()
      ));
      false
    } catch { case _: IllegalStateException => true; case _: Exception => false }

  @Test def writersAtTheSameTimeGetAProducerEach(): Unit = {
    val kp = params("each")
    val a = ProducerPool.acquire(kp)
    val b = ProducerPool.acquire(kp)
    assertNotSame(a, b, "two writers at once must not queue behind one producer's connection")
    ProducerPool.release(kp, a, failed = true)
    ProducerPool.release(kp, b, failed = true)
  }

  @Test def aProducerGivenBackIsLentAgain(): Unit = {
    val kp = params("again")
    val a = ProducerPool.acquire(kp)
    ProducerPool.release(kp, a, failed = false)
    val b = ProducerPool.acquire(kp)
    assertSame(a, b, "a healthy producer stays pooled")
    assertFalse(closed(b))
    val other = ProducerPool.acquire(params("other-settings"))
    assertNotSame(b, other, "other settings get their own producer")
    ProducerPool.release(kp, b, failed = true)
    ProducerPool.release(params("other-settings"), other, failed = true)
  }

  @Test def aFailedProducerIsClosedAndNotLentAgain(): Unit = {
    val kp = params("fail")
    val a = ProducerPool.acquire(kp)
    val b = ProducerPool.acquire(kp)
    ProducerPool.release(kp, a, failed = true)
    assertTrue(closed(a), "closed when given back failed")
    assertFalse(closed(b), "another writer's producer is not touched")
    ProducerPool.release(kp, b, failed = false)
    val next = ProducerPool.acquire(kp)
    assertSame(b, next, "later writers get the healthy one")
    ProducerPool.release(kp, next, failed = true)
  }

  @Test def clearClosesIdleProducersAndThoseLentOutWhenGivenBack(): Unit = {
    val kp = params("clear")
    val idle = ProducerPool.acquire(kp)
    val lent = ProducerPool.acquire(kp)
    ProducerPool.release(kp, idle, failed = false)
    ProducerPool.clear()
    assertTrue(closed(idle), "an idle producer is closed at once")
    assertFalse(closed(lent), "a lent producer keeps working for its writer")
    ProducerPool.release(kp, lent, failed = false)
    assertTrue(closed(lent), "and is closed when given back")
    val next = ProducerPool.acquire(kp)
    assertFalse(closed(next), "the pool starts a new one for later writers")
    ProducerPool.release(kp, next, failed = true)
  }
}
