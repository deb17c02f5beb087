package streamctl.system

import java.util.concurrent.{Executors, TimeUnit}

import scala.annotation.nowarn
import scala.jdk.CollectionConverters._

import org.apache.kafka.clients.consumer.KafkaConsumer
import org.apache.kafka.common.TopicPartition
import org.slf4j.LoggerFactory

import streamctl.DaemonThreads

/**
 * Kafka consumers kept warm on an executor between batches, keyed by client settings and task, each
 * with its owner (the source that read with it: its metadata store) and what its last reader
 * fetched past its end ([[Prefetched]]). A task that runs on the same executor again gets its
 * consumer back, with its connections, its position and those records, which is what host affinity
 * pays off for; a later run of the same query (a scheduled `Trigger.AvailableNow` run), or another
 * query reading the same partitions, finds the consumers of the one before.
 *
 * Every query's first task is `Partition 0`, and the queries of one application (a pipeline) read
 * side by side, so a key may hold several idle consumers. A reader takes, in this order, its own
 * owner's consumer assigned to its partitions, its own owner's newest, or another owner's assigned
 * to its partitions; never another owner's consumer of other partitions. Taking the newest of any
 * owner, a query whose first batch started while another query was between batches took that
 * query's consumer, which then created a new one for its next batch.
 *
 * Sized by what the executor's tasks need, not by a fixed count: a consumer idle for
 * [[idleTimeoutMs]] (5 min, as Spark's own consumer cache) is closed, so the pool holds the
 * consumers of the tasks that ran here recently, one per task. [[maxIdle]] only guards the
 * executor's memory and file handles (a consumer holds a socket per broker it reads from and up to
 * a poll's records): beyond it the least recently released is closed, and the first such eviction
 * logs a WARN naming the setting. Both come from the Spark settings
 * `spark.streamctl.consumerPool.idleTimeout` and `spark.streamctl.consumerPool.maxIdle`
 * (`spark.TaskReaderFactory`). Emptied when the JVM shuts down.
 *
 * {{{
 * val lease = ConsumerPool.acquire(params, storePath, "Partition 0", Seq(SSP.kafka("orders", 0)))
 * try read(lease.consumer, lease.prefetched)
 * finally ConsumerPool.release(params, storePath, "Partition 0", lease.consumer, leftOver)
 * }}}
 */
object ConsumerPool {
  type Consumer = KafkaConsumer[Array[Byte], Array[Byte]]

  /**
   * A consumer for one reader, whether it came from the pool, and what its last reader left
   * fetched.
   */
  final case class Lease(
      consumer: Consumer,
      reused: Boolean,
      prefetched: java.util.Map[TopicPartition, Prefetched]
  )

  private final case class Idle(
      key: String,
      owner: String,
      prefetched: java.util.Map[TopicPartition, Prefetched],
      sinceNs: Long
  )

  /** The most idle consumers kept; beyond it the least recently released is closed. */
  @volatile var maxIdle: Int = 10000

  /** How long a consumer may stay idle before it is closed. */
  @volatile var idleTimeoutMs: Long = 5 * 60 * 1000L

  private val log = LoggerFactory.getLogger(getClass)
  @volatile private var warnedFull = false
  // Idle consumers, least recently released first.
  private val idle = new java.util.LinkedHashMap[Consumer, Idle]()
  /* The same consumers by key, least recently released first: a reader looks only at its own
   * task's, not at every idle consumer (an executor reading 4,096 partitions holds as many, and a
   * scan per reader made each batch quadratic in the partition count). Changed only with `idle`. */
  private val byKey = new java.util.HashMap[String, java.util.LinkedHashSet[Consumer]]()
  // Closes consumers that outlived the idle timeout when no reader comes by to do it.
  private lazy val sweeper = {
    val s =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("streamctl-consumer-pool"))
    s.scheduleWithFixedDelay(() => closeAll(expired(System.nanoTime())), 10, 10, TimeUnit.SECONDS)
    s
  }

  sys.addShutdownHook(clear())

  /** A consumer for `owner`'s `task`, preferably one assigned to `ssps` already. */
  def acquire(params: KafkaParams, owner: String, task: TaskName, ssps: Iterable[SSP]): Lease = {
    val wanted = key(params, task)
    lazy val partitions = ssps.iterator.map(s => new TopicPartition(s.stream, s.partition)).toSet
    val (cached, stale) = idle.synchronized {
      var assigned, newest, othersAssigned: Consumer = null
      // Idle consumers are used by no reader, so asking one its assignment races with nothing.
      val same = byKey.get(wanted)
      if (same != null) same.forEach { c =>
        val own = idle.get(c).owner == owner
        if (own) newest = c
        if (c.assignment().asScala == partitions) {
          if (own) assigned = c else othersAssigned = c
        }
      }
      val chosen =
        if (assigned != null) assigned else if (newest != null) newest else othersAssigned
      (
        if (chosen != null) remove(chosen).map(chosen -> _.prefetched) else None,
        expired(System.nanoTime())
      )
    }
    closeAll(stale)
    cached match {
      case Some((c, prefetched)) => Lease(c, reused = true, prefetched)
      case None => Lease(
          params.newClient("consumer")(new KafkaConsumer[
            Array[Byte],
            Array[Byte]
          ](params.consumer)),
          reused = false,
          java.util.Map.of()
        )
    }
  }

  /**
   * Gives a healthy consumer back, with what its reader fetched and did not hand on (for the next
   * reader of those partitions); one that failed must be closed by the caller instead.
   */
  def release(
      params: KafkaParams,
      owner: String,
      task: TaskName,
      consumer: Consumer,
      prefetched: java.util.Map[TopicPartition, Prefetched] = java.util.Map.of()
  ): Unit = {
    sweeper
    val now = System.nanoTime()
    val evicted = idle.synchronized {
      remove(consumer)
      add(consumer, Idle(key(params, task), owner, prefetched, now))
      val out = expired(now)
      var full = 0
      while (idle.size() > maxIdle) {
        val oldest = idle.keySet().iterator().next()
        remove(oldest)
        out.add(oldest)
        full += 1
      }
      if (full > 0 && !warnedFull) {
        warnedFull = true
        log.warn(
          s"More than $maxIdle Kafka consumers idle on this executor: the least recently used are closed, and " +
            "their tasks create new ones next time. Raise spark.streamctl.consumerPool.maxIdle if the executor can hold them"
        )
      }
      out
    }
    closeAll(evicted)
  }

  /** How many consumers wait in the pool. */
  def idleCount: Int = idle.synchronized(idle.size())

  /** Closes every idle consumer (an executor or session shutting down, a test starting cold). */
  def clear(): Unit = {
    val all = idle.synchronized {
      val l = new java.util.ArrayList(idle.keySet())
      idle.clear()
      byKey.clear()
      l
    }
    closeAll(all)
  }

  /* close(CloseOptions), which kafka-clients 4.1 prefers, is not in 3.9, which the jar also runs
   * with. */
  @nowarn("cat=deprecation")
  def closeQuietly(c: Consumer): Unit =
    try c.close(java.time.Duration.ofSeconds(2))
    catch { case _: Exception => () }

  /* Under the lock: removes and returns the consumers idle longer than the timeout (the oldest come
   * first). */
  private def expired(now: Long): java.util.ArrayList[Consumer] = idle.synchronized {
    val out = new java.util.ArrayList[Consumer]()
    val it = idle.entrySet().iterator()
    var more = true
    while (more && it.hasNext) {
      val e = it.next()
      if ((now - e.getValue.sinceNs) / 1000000L >= idleTimeoutMs) {
        out.add(e.getKey)
        it.remove()
        unindex(e.getKey, e.getValue.key)
      } else more = false
    }
    out
  }

  // Under the lock, as every change to `idle`: keeps `byKey` the same consumers.
  private def add(c: Consumer, i: Idle): Unit = {
    idle.put(c, i)
    byKey.computeIfAbsent(i.key, _ => new java.util.LinkedHashSet[Consumer]()).add(c)
  }

  private def remove(c: Consumer): Option[Idle] = {
    val i = Option(idle.remove(c))
    i.foreach(x => unindex(c, x.key))
    i
  }

  private def unindex(c: Consumer, key: String): Unit = {
    val same = byKey.get(key)
    if (same != null) {
      same.remove(c)
      if (same.isEmpty) byKey.remove(key)
    }
  }

  private def closeAll(consumers: java.util.List[Consumer]): Unit =
    consumers.forEach(c => closeQuietly(c))

  private def key(params: KafkaParams, task: TaskName): String =
    params.cacheKey + "\u0001" + task.name
}
