package streamctl.system

import scala.jdk.CollectionConverters._

import org.apache.kafka.clients.consumer.KafkaConsumer
import org.apache.kafka.common.TopicPartition

/**
 * Kafka consumers kept warm on an executor between batches, keyed by client settings and task.
 * A task that runs on the same executor again gets its consumer back, with its connections and
 * prefetched data, which is what host affinity pays off for; a later query reading the same
 * streams (a scheduled `Trigger.AvailableNow` run) finds the consumers of the one before.
 *
 * A key may hold several idle consumers, and a reader takes the one already assigned to its
 * partitions when there is one: every query's first task is `Partition 0`, and the queries of
 * one application (a pipeline) read side by side. With one consumer per task name, the second
 * query's release closed the first one's consumer, so one of them created a consumer at every
 * batch (and in real-time mode paid for it at every batch boundary).
 *
 * Bounded (LRU over idle consumers; evicted ones are closed) and emptied at JVM shutdown.
 *
 * {{{
 * val ssps = Seq(SSP.kafka("orders", 0))
 * val (c, reused) = ConsumerPool.acquireNoting(params, "Partition 0", ssps)
 * try read(c) finally ConsumerPool.release(params, "Partition 0", c)
 * }}}
 */
object ConsumerPool {
  type Consumer = KafkaConsumer[Array[Byte], Array[Byte]]

  @volatile var capacity: Int = 64

  // Idle consumers and their keys, oldest release first (the least recently used).
  private val idle = new java.util.LinkedHashMap[Consumer, String]()

  sys.addShutdownHook(clear())

  /**
   * A consumer for `task`, preferably one assigned to `ssps` already, and whether it was reused
   * (for the per-batch metrics).
   */
  def acquireNoting(params: KafkaParams, task: String, ssps: Iterable[SSP]): (Consumer, Boolean) = {
    val wanted = key(params, task)
    lazy val partitions = ssps.iterator.map(s => new TopicPartition(s.stream, s.partition)).toSet
    val cached = idle.synchronized {
      var newest, assigned: Consumer = null
      // Idle consumers are used by no reader, so asking one its assignment races with nothing.
      idle.forEach { (c, k) =>
        if (k == wanted) {
          newest = c
          if (c.assignment().asScala == partitions) assigned = c
        }
      }
      val chosen = if (assigned != null) assigned else newest
      if (chosen != null) idle.remove(chosen)
      chosen
    }
    if (cached != null) (cached, true)
    else (params.newClient("consumer")(new KafkaConsumer[Array[Byte], Array[Byte]](params.consumer)), false)
  }

  /** Gives a healthy consumer back; one that failed must be closed by the caller instead. */
  def release(params: KafkaParams, task: String, consumer: Consumer): Unit = {
    val evicted = idle.synchronized {
      idle.remove(consumer)
      idle.put(consumer, key(params, task))
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

  private def key(params: KafkaParams, task: String): String = params.cacheKey + "\u0001" + task
}
