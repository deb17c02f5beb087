package streamctl.system

import org.apache.kafka.clients.producer.KafkaProducer

/**
 * One Kafka producer per client settings per executor JVM: producers are thread-safe and
 * expensive to start, and every task writing with the same settings can share one.
 *
 * Users are counted. A producer that failed leaves the pool at once, so the next task
 * starts a fresh one, but it is closed only when its last user releases it: closing it
 * under tasks still sending through it would fail them for nothing. Closed at JVM shutdown.
 *
 * {{{
 * val p = ProducerPool.acquire(params)
 * var failed = true
 * try { send(p); failed = false } finally ProducerPool.release(params, p, failed)
 * }}}
 */
object ProducerPool {
  type Producer = KafkaProducer[Array[Byte], Array[Byte]]

  private final class Entry(val producer: Producer) {
    var users = 0
    var retired = false
  }

  private val pooled = new java.util.HashMap[String, Entry]()
  private val byProducer = new java.util.IdentityHashMap[Producer, Entry]()

  sys.addShutdownHook(synchronized(byProducer.keySet().forEach(p => closeQuietly(p, 5))))

  def acquire(params: KafkaParams): Producer = synchronized {
    val entry = pooled.computeIfAbsent(params.cacheKey, _ => {
      val e = new Entry(params.newClient("producer")(new KafkaProducer[Array[Byte], Array[Byte]](params.producer)))
      byProducer.put(e.producer, e)
      e
    })
    entry.users += 1
    entry.producer
  }

  /** Gives a producer back; `failed` retires it (the pool makes a new one for later tasks). */
  def release(params: KafkaParams, producer: Producer, failed: Boolean): Unit = {
    val close = synchronized {
      val entry = byProducer.get(producer)
      if (entry == null) false
      else {
        entry.users -= 1
        if (failed && !entry.retired) {
          entry.retired = true
          pooled.remove(params.cacheKey, entry)
        }
        val last = entry.retired && entry.users <= 0
        if (last) byProducer.remove(producer)
        last
      }
    }
    if (close) closeQuietly(producer, 0)
  }

  private def closeQuietly(p: Producer, seconds: Int): Unit =
    try p.close(java.time.Duration.ofSeconds(seconds)) catch { case _: Exception => () }
}
