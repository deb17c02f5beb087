package streamctl.system

import org.apache.kafka.clients.producer.KafkaProducer

/**
 * One Kafka producer per client settings per executor JVM: producers are thread-safe and
 * expensive to start, and every task writing with the same settings can share one.
 * Closed at JVM shutdown.
 */
object ProducerPool {
  type Producer = KafkaProducer[Array[Byte], Array[Byte]]

  private val producers = new java.util.concurrent.ConcurrentHashMap[String, Producer]()

  sys.addShutdownHook(producers.values().forEach(p => try p.close(java.time.Duration.ofSeconds(5)) catch { case _: Exception => () }))

  def get(params: KafkaParams): Producer =
    producers.computeIfAbsent(params.cacheKey, _ => new KafkaProducer[Array[Byte], Array[Byte]](params.producer))

  /** Drops a producer that failed, so the next task starts a fresh one. */
  def invalidate(params: KafkaParams, producer: Producer): Unit =
    if (producers.remove(params.cacheKey, producer)) try producer.close(java.time.Duration.ZERO) catch { case _: Exception => () }
}
