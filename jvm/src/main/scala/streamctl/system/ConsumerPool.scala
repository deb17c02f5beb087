package streamctl.system

import org.apache.kafka.clients.consumer.KafkaConsumer

/**
 * Kafka consumers kept warm on an executor between batches, keyed by client settings and
 * task. A task that runs on the same executor again gets its consumer back, with its
 * connections and prefetched data, which is what host affinity pays off for.
 *
 * Bounded (LRU over idle consumers; evicted ones are closed) and emptied at JVM shutdown.
 *
 * {{{
 * val (c, reused) = ConsumerPool.acquireNoting(params, "Partition 0")
 * try read(c) finally ConsumerPool.release(params, "Partition 0", c)
 * }}}
 */
object ConsumerPool {
  type Consumer = KafkaConsumer[Array[Byte], Array[Byte]]

  @volatile var capacity: Int = 64


  // Access-ordered, so iteration starts at the least recently used idle consumer.
  private val idle = new java.util.LinkedHashMap[String, Consumer](16, 0.75f, true)

  sys.addShutdownHook(clear())

  /** A consumer for `task`, and whether it was reused (for the per-batch metrics). */
  def acquireNoting(params: KafkaParams, task: String): (Consumer, Boolean) = {
    val cached = idle.synchronized(idle.remove(key(params, task)))
    if (cached != null) (cached, true)
    else (params.newClient("consumer")(new KafkaConsumer[Array[Byte], Array[Byte]](params.consumer)), false)
  }

  /** Gives a healthy consumer back; one that failed must be closed by the caller instead. */
  def release(params: KafkaParams, task: String, consumer: Consumer): Unit = {
    val evicted = idle.synchronized {
      val previous = idle.put(key(params, task), consumer)
      val out = new java.util.ArrayList[Consumer]()
      if (previous != null && (previous ne consumer)) out.add(previous)
      val it = idle.entrySet().iterator()
      while (idle.size() > capacity && it.hasNext) { out.add(it.next().getValue); it.remove() }
      out
    }
    evicted.forEach(c => closeQuietly(c))
  }


  def clear(): Unit = {
    val all = idle.synchronized { val l = new java.util.ArrayList(idle.values()); idle.clear(); l }
    all.forEach(c => closeQuietly(c))
  }

  def closeQuietly(c: Consumer): Unit =
    try c.close(java.time.Duration.ofSeconds(2)) catch { case _: Exception => () }

  private def key(params: KafkaParams, task: String): String = params.cacheKey + "\u0001" + task
}
