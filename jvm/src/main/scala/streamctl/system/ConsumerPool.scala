package streamctl.system

import org.apache.kafka.clients.consumer.KafkaConsumer

/**
 * Kafka consumers kept warm on an executor between batches, keyed by client settings, the
 * source that reads (its `owner`: one per query source) and the task: a task that runs on the
 * same executor again gets back the consumer already assigned to its partitions, with its
 * connections and prefetched data, which is what host affinity pays off for.
 *
 * The owner is in the key, and a key may hold several idle consumers, because every query's
 * first task is `Partition 0` and the queries of one application (a pipeline) read side by
 * side: keyed by task alone, the second query's release closed the first one's consumer, so
 * one of them created a consumer at every batch (and in real-time mode paid for it at every
 * batch boundary).
 *
 * Bounded (LRU over idle consumers; evicted ones are closed) and emptied at JVM shutdown.
 *
 * {{{
 * val (c, reused) = ConsumerPool.acquireNoting(params, "/chk/orders/sources/0", "Partition 0")
 * try read(c) finally ConsumerPool.release(params, "/chk/orders/sources/0", "Partition 0", c)
 * }}}
 */
object ConsumerPool {
  type Consumer = KafkaConsumer[Array[Byte], Array[Byte]]

  @volatile var capacity: Int = 64

  // Idle consumers and their keys, oldest release first (the least recently used).
  private val idle = new java.util.LinkedHashMap[Consumer, String]()

  sys.addShutdownHook(clear())

  /** A consumer for `task` of source `owner`, and whether it was reused (for the per-batch metrics). */
  def acquireNoting(params: KafkaParams, owner: String, task: String): (Consumer, Boolean) = {
    val wanted = key(params, owner, task)
    val cached = idle.synchronized {
      var newest: Consumer = null
      idle.forEach((c, k) => if (k == wanted) newest = c)
      if (newest != null) idle.remove(newest)
      newest
    }
    if (cached != null) (cached, true)
    else (params.newClient("consumer")(new KafkaConsumer[Array[Byte], Array[Byte]](params.consumer)), false)
  }

  /** Gives a healthy consumer back; one that failed must be closed by the caller instead. */
  def release(params: KafkaParams, owner: String, task: String, consumer: Consumer): Unit = {
    val evicted = idle.synchronized {
      idle.remove(consumer)
      idle.put(consumer, key(params, owner, task))
      val out = new java.util.ArrayList[Consumer]()
      val it = idle.keySet().iterator()
      while (idle.size() > capacity && it.hasNext) { out.add(it.next()); it.remove() }
      out
    }
    evicted.forEach(c => closeQuietly(c))
  }

  /** How many consumers wait in the pool. */
  def idleCount: Int = idle.synchronized(idle.size())

  def clear(): Unit = {
    val all = idle.synchronized { val l = new java.util.ArrayList(idle.keySet()); idle.clear(); l }
    all.forEach(c => closeQuietly(c))
  }

  def closeQuietly(c: Consumer): Unit =
    try c.close(java.time.Duration.ofSeconds(2)) catch { case _: Exception => () }

  private def key(params: KafkaParams, owner: String, task: String): String =
    params.cacheKey + "\u0001" + owner + "\u0001" + task
}
