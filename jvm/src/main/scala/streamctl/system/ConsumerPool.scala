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
 * with its owner (the source that read with it: its metadata store); and, apart from them, what
 * each partition's last reader fetched past its end ([[Prefetched]]). A task that runs on the same
 * executor again gets its consumer back, with its connections and its position, and the records of
 * its partitions, which is what host affinity pays off for; a later run of the same query (a
 * scheduled `Trigger.AvailableNow` run), or another query reading the same partitions, finds the
 * consumers of the one before.
 *
 * Every query's first task is `Partition 0`, and the queries of one application (a pipeline) read
 * side by side, so a key may hold several idle consumers. A reader takes, in this order, its own
 * owner's consumer assigned to its partitions, its own owner's newest, or another owner's assigned
 * to its partitions; never another owner's consumer of other partitions while the pool may still
 * grow. Taking the newest of any owner, a query whose first batch started while another query was
 * between batches took that query's consumer, which then created a new one for its next batch.
 *
 * Bounded by the topic metadata its consumers hold, not only by their count: each consumer keeps
 * the metadata of every partition of the topics it reads (Kafka's consumer keeps the whole topic's,
 * about 0.6 KB a partition), so one consumer per task made an executor running all of a topic's
 * tasks hold partitions × partitions of it: 9 GB for 4,096. And by their count: each holds about
 * four open files, and one per task kept a topic's worth of sockets open on every executor (in
 * local mode in the driver, where every file it holds slows each fork Hadoop's local file system
 * makes to write Spark's logs). Once the consumers' partitions, summed, would pass
 * [[maxMetadataPartitions]] (by default what 5% of the heap holds at 0.6 KB a partition: 894,784
 * for 10 GB, so 218 consumers of a 4,096-partition topic, or 873 of a 1,024-partition one), or
 * their count [[countBound]] (by default [[ConsumersPerReaderAtOnce]] for each reader the executor
 * has had at once: 16 for Spark's two task slots of `local[2]`), a reader whose task has none idle
 * takes the least recently released idle consumer with the same client settings, whichever task it
 * last read for, instead of creating one. Records fetched past a range stay with their partition,
 * not the consumer, so the task's next reader finds them on any consumer (which it moves to the
 * position after them). Beyond the bounds only a reader that finds every consumer in use creates
 * one; when more come back than the bounds allow, the least recently released is closed, and the
 * first such closing logs a WARN naming the settings. A consumer or a partition's records idle for
 * [[idleTimeoutMs]] (5 min, as Spark's own consumer cache) are dropped. All three come from Spark
 * settings `spark.streamctl.consumerPool.*` ([[ConsumerPoolSettings]]). Emptied when the JVM shuts
 * down.
 *
 * {{{
 * val lease = ConsumerPool.acquire(params, storePath, TaskName("Partition 0"), Seq(SSP.kafka("orders", 0)))
 * try read(lease.consumer, lease.prefetched)
 * finally ConsumerPool.release(params, storePath, TaskName("Partition 0"), lease.consumer, leftOver)
 * }}}
 */
object ConsumerPool {
  type Consumer = KafkaConsumer[Array[Byte], Array[Byte]]

  /**
   * A consumer for one reader, whether it came from the pool, and what earlier readers of its
   * partitions fetched and did not hand on.
   */
  final case class Lease(
      consumer: Consumer,
      reused: Boolean,
      prefetched: java.util.Map[TopicPartition, Prefetched]
  )

  private final case class Idle(key: String, settings: String, owner: String, sinceNs: Long)

  /* A partition's records fetched past a read, and the consumer positioned after them: weakly, so
   * that a consumer closed meanwhile (with its topic metadata) is not kept for its records. */
  private final case class Left(
      prefetched: Prefetched,
      by: java.lang.ref.WeakReference[Consumer],
      sinceNs: Long
  )

  /**
   * The most consumers the pool holds, idle and in use, where set
   * (`spark.streamctl.consumerPool.maxConsumers`); unset, [[countBound]] follows the readers the
   * executor has had at once.
   */
  @volatile var maxConsumers: Option[Int] = None

  /**
   * Consumers kept for each reader the executor has had at once, without [[maxConsumers]]. A reader
   * whose task has no consumer of its own takes the one given back longest ago, so that its last
   * fetch has been answered: a consumer sends no fetch to a broker while one is waiting there. With
   * eight on `local[2]`, a batch at the head of live data was no slower than with one consumer per
   * task, and a batch of 128 partitions already on the broker took 0.43–0.49× the built-in's time
   * instead of 0.52–0.59× (docs/performance.md).
   */
  val ConsumersPerReaderAtOnce = 8

  /**
   * The most consumers the pool holds now, idle and in use; beyond it readers take other tasks'
   * idle consumers. [[maxConsumers]] where set; else [[ConsumersPerReaderAtOnce]] for each reader
   * the executor has had at once (since the last [[clear]]), at most [[defaultMaxConsumers]].
   */
  def countBound: Int = idle.synchronized(bound)

  /**
   * The most consumers the pool ever holds without [[maxConsumers]]: 10,000, or fewer where the
   * process may open too few files for that many: each consumer holds about four (a socket to the
   * bootstrap broker and one to each broker it fetches from, and its selector's two), and the pool
   * keeps to half of the limit, leaving the rest to Spark's own files, sockets and other clients.
   * With Linux's common default of 1,024 that is 128.
   */
  lazy val defaultMaxConsumers: Int = maxConsumersFor(openFileLimit)

  private[system] def maxConsumersFor(openFileLimit: Option[Long]): Int = {
    val most = 10000L
    openFileLimit.fold(most)(limit => math.max(1L, math.min(most, limit / 8))).toInt
  }

  private def openFileLimit: Option[Long] =
    java.lang.management.ManagementFactory.getOperatingSystemMXBean match {
      case unix: com.sun.management.UnixOperatingSystemMXBean =>
        Some(unix.getMaxFileDescriptorCount).filter(_ > 0)
      case _ => None
    }

  /**
   * The most topic partitions the pool's consumers hold metadata for, summed over consumers; beyond
   * it readers take other tasks' idle consumers.
   */
  @volatile var maxMetadataPartitions: Long = defaultMetadataPartitions

  /**
   * What 5% of this JVM's heap holds of Kafka's topic metadata, at about 0.6 KB a partition (a heap
   * histogram of 1,024 consumers of a 1,024-partition topic: 600 MB).
   */
  def defaultMetadataPartitions: Long = math.max(1L, Runtime.getRuntime.maxMemory() / 20 / 600)

  /**
   * How long a consumer, or a partition's prefetched records, may stay idle before it is dropped.
   */
  @volatile var idleTimeoutMs: Long = 5 * 60 * 1000L

  private val log = LoggerFactory.getLogger(getClass)
  @volatile private var warnedFull = false
  // Idle consumers, least recently released first.
  private val idle = new java.util.LinkedHashMap[Consumer, Idle]()
  /* The same consumers by key, least recently released first: a reader looks only at its own
   * task's, not at every idle consumer (an executor reading 4,096 partitions runs as many tasks,
   * and a scan per reader made each batch quadratic in the partition count). Changed only with
   * `idle`, as is `bySettings`, the same consumers by client settings, where a reader whose task
   * has none takes the least recently released. */
  private val byKey = new java.util.HashMap[String, java.util.LinkedHashSet[Consumer]]()
  private val bySettings = new java.util.HashMap[String, java.util.LinkedHashSet[Consumer]]()
  /* Every consumer the pool made and nobody closed yet, idle or in use, with the topic partitions
   * it holds metadata for, and their sum; and the readers making one, with the partitions theirs
   * will hold: two readers at once must not both take the last place under the bounds. */
  private val open = new java.util.IdentityHashMap[Consumer, java.lang.Long]()
  private var held = 0L
  private var creating = 0
  private var creatingHeld = 0L
  // The most readers that held a consumer at once, what the count bound follows by default.
  private var mostAtOnce = 0
  // Partition counts of the topics read here, as the consumers that read them report them.
  private val topicPartitions = new java.util.HashMap[String, java.lang.Long]()
  // Per client settings and partition, least recently released first; changed under `idle`'s lock.
  private val left = new java.util.LinkedHashMap[(String, TopicPartition), Left]()
  // Closes consumers that outlived the idle timeout when no reader comes by to do it.
  private lazy val sweeper = {
    val s =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("streamctl-consumer-pool"))
    s.scheduleWithFixedDelay(() => closeAll(expired(System.nanoTime())), 10, 10, TimeUnit.SECONDS)
    s
  }

  sys.addShutdownHook(clear())

  /**
   * A consumer for `owner`'s `task`, preferably one assigned to `ssps` already, with what earlier
   * readers of `ssps` fetched past their ranges.
   */
  def acquire(params: KafkaParams, owner: String, task: TaskName, ssps: Iterable[SSP]): Lease = {
    val wanted = key(params, task)
    val partitions = ssps.iterator.map(s => new TopicPartition(s.stream, s.partition)).toSet
    val (cached, holds, prefetched, stale) = idle.synchronized {
      val holds = metadataOf(partitions.iterator.map(_.topic()))
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
      mostAtOnce = math.max(mostAtOnce, open.size() - idle.size() + creating + 1)
      val chosen =
        if (assigned != null) assigned
        else if (newest != null) newest
        else if (othersAssigned != null) othersAssigned
        else if (
          open.size() + creating >= bound ||
          held + creatingHeld + holds > maxMetadataPartitions
        ) leastRecent(params.cacheKey)
        else null
      if (chosen != null) remove(chosen)
      else { creating += 1; creatingHeld += holds }
      (chosen, holds, handOver(params.cacheKey, partitions, chosen), expired(System.nanoTime()))
    }
    closeAll(stale)
    if (cached != null) Lease(cached, reused = true, prefetched)
    else {
      var c: Consumer = null
      try c =
          params.newClient("consumer")(new KafkaConsumer[Array[Byte], Array[Byte]](params.consumer))
      finally idle.synchronized {
          creating -= 1
          creatingHeld -= holds
          if (c != null) hold(c, holds)
        }
      Lease(c, reused = false, prefetched)
    }
  }

  /**
   * Gives a healthy consumer back, with what its reader fetched and did not hand on (for the next
   * reader of those partitions) and the partition counts of the topics it read, from the consumer's
   * metadata; one that failed must be closed by the caller instead.
   */
  def release(
      params: KafkaParams,
      owner: String,
      task: TaskName,
      consumer: Consumer,
      prefetched: java.util.Map[TopicPartition, Prefetched] = java.util.Map.of(),
      partitionCounts: Map[String, Int] = Map.empty
  ): Unit = {
    sweeper
    val now = System.nanoTime()
    val evicted = idle.synchronized {
      partitionCounts.foreach { case (t, n) => topicPartitions.put(t, n.toLong) }
      remove(consumer)
      hold(consumer, metadataOf(consumer.assignment().asScala.iterator.map(_.topic())))
      add(consumer, Idle(key(params, task), params.cacheKey, owner, now))
      prefetched.forEach { (tp, p) =>
        val k = (params.cacheKey, tp)
        left.remove(k) // re-inserted last: the map stays least recently released first
        left.put(k, Left(p, new java.lang.ref.WeakReference(consumer), now))
      }
      val out = expired(now)
      var full = 0
      val most = bound
      while ((open.size() > most || held > maxMetadataPartitions) && !idle.isEmpty) {
        val oldest = idle.keySet().iterator().next()
        remove(oldest)
        unhold(oldest)
        out.add(oldest)
        full += 1
      }
      if (full > 0 && !warnedFull) {
        warnedFull = true
        log.warn(
          s"This executor's Kafka consumers outgrew the pool's bound of $most consumers, or held metadata of more " +
            s"than $maxMetadataPartitions topic partitions: the least recently used are closed as they come back, and " +
            "created again when needed. Raise spark.streamctl.consumerPool.maxConsumers or " +
            "spark.streamctl.consumerPool.maxMetadataPartitions if the executor can hold them"
        )
      }
      out
    }
    closeAll(evicted)
  }

  /**
   * Ends a reader's hold on `consumer`: runs `closing` (the reader's own closing, where a user's
   * chooser stops), then gives the consumer back ([[release]]) if the read was `healthy` and
   * `closing` threw nothing, else closes it. Whatever `closing` throws (rethrown), the consumer
   * leaves the reader: skipped, it stayed open and counted against the pool's bounds for good.
   */
  def finish(
      params: KafkaParams,
      owner: String,
      task: TaskName,
      consumer: Consumer,
      healthy: Boolean,
      prefetched: => java.util.Map[TopicPartition, Prefetched] = java.util.Map.of(),
      partitionCounts: => Map[String, Int] = Map.empty
  )(closing: => Unit): Unit = {
    var closed = false
    try { closing; closed = true }
    finally
      if (healthy && closed)
        try release(params, owner, task, consumer, prefetched, partitionCounts)
        catch { case t: Throwable => closeOnAnyThread(consumer); throw t }
      else closeOnAnyThread(consumer)
  }

  /* A stopped query kills its Spark task attempts by interrupting them; a consumer closed on an
   * interrupted thread cannot say goodbye to the broker and logs that as an ERROR. The interrupt is
   * the stop, already seen: close with it cleared, then set it again for Spark. */
  private def closeOnAnyThread(c: Consumer): Unit = {
    val interrupted = Thread.interrupted()
    try closeQuietly(c)
    finally if (interrupted) Thread.currentThread().interrupt()
  }

  /** How many consumers wait in the pool. */
  def idleCount: Int = idle.synchronized(idle.size())

  /** How many consumers the pool holds, idle and in use. */
  def openCount: Int = idle.synchronized(open.size())

  /** How many topic partitions the pool's consumers hold metadata for, summed. */
  def heldPartitions: Long = idle.synchronized(held)

  /**
   * Closes every idle consumer and forgets those in use, which count again once given back (an
   * executor or session shutting down, a test starting cold).
   */
  def clear(): Unit = {
    val all = idle.synchronized {
      val l = new java.util.ArrayList(idle.keySet())
      open.clear()
      held = 0L
      mostAtOnce = 0
      idle.clear()
      byKey.clear()
      bySettings.clear()
      left.clear()
      l
    }
    closeAll(all)
  }

  /* close(CloseOptions), which kafka-clients 4.1 prefers, is not in 3.9, which the jar also runs
   * with. */
  @nowarn("cat=deprecation")
  def closeQuietly(c: Consumer): Unit = {
    idle.synchronized(unhold(c))
    try c.close(java.time.Duration.ofSeconds(2))
    catch { case _: Exception => () }
  }

  /* Under the lock: takes what earlier readers left of `partitions`; a record list left by another
   * consumer, or by `to` for partitions it no longer has, comes marked unpositioned, and its reader
   * seeks. */
  private def handOver(
      settings: String,
      partitions: Set[TopicPartition],
      to: Consumer
  ): java.util.Map[TopicPartition, Prefetched] = {
    val out = new java.util.HashMap[TopicPartition, Prefetched]()
    lazy val assigned = to.assignment()
    partitions.foreach { tp =>
      val l = left.remove((settings, tp))
      if (l != null) {
        val positioned = to != null && (l.by.get eq to) && assigned.contains(tp)
        out.put(tp, if (positioned) l.prefetched else l.prefetched.copy(positioned = false))
      }
    }
    out
  }

  // Under the lock: the topic partitions a consumer of `topics` holds metadata for, as known.
  private def metadataOf(topics: Iterator[String]): Long =
    topics.toSet.iterator.map((t: String) => topicPartitions.getOrDefault(t, 0L).longValue()).sum

  private def hold(c: Consumer, partitions: Long): Unit = {
    val before = open.put(c, partitions)
    held += partitions - (if (before == null) 0L else before.longValue())
  }

  private def unhold(c: Consumer): Unit = {
    val before = open.remove(c)
    if (before != null) held -= before.longValue()
  }

  private def bound: Int = maxConsumers.getOrElse(
    math.min(defaultMaxConsumers, ConsumersPerReaderAtOnce * math.max(1, mostAtOnce))
  )

  private def leastRecent(settings: String): Consumer = {
    val same = bySettings.get(settings)
    if (same == null) null else same.iterator().next()
  }

  /* Under the lock: removes and returns the consumers idle longer than the timeout (the oldest come
   * first), and drops partitions' records as old. */
  private def expired(now: Long): java.util.ArrayList[Consumer] = idle.synchronized {
    def old(sinceNs: Long) = (now - sinceNs) / 1000000L >= idleTimeoutMs
    val out = new java.util.ArrayList[Consumer]()
    val it = idle.entrySet().iterator()
    var more = true
    while (more && it.hasNext) {
      val e = it.next()
      if (old(e.getValue.sinceNs)) {
        out.add(e.getKey)
        it.remove()
        unindex(e.getKey, e.getValue)
        unhold(e.getKey)
      } else more = false
    }
    val records = left.values().iterator()
    more = true
    while (more && records.hasNext)
      if (old(records.next().sinceNs)) records.remove() else more = false
    out
  }

  // Under the lock, as every change to `idle`: keeps `byKey` and `bySettings` the same consumers.
  private def add(c: Consumer, i: Idle): Unit = {
    idle.put(c, i)
    byKey.computeIfAbsent(i.key, _ => new java.util.LinkedHashSet[Consumer]()).add(c)
    bySettings.computeIfAbsent(i.settings, _ => new java.util.LinkedHashSet[Consumer]()).add(c)
  }

  private def remove(c: Consumer): Option[Idle] = {
    val i = Option(idle.remove(c))
    i.foreach(x => unindex(c, x))
    i
  }

  private def unindex(c: Consumer, i: Idle): Unit = {
    drop(byKey, i.key, c)
    drop(bySettings, i.settings, c)
  }

  private def drop(
      index: java.util.HashMap[String, java.util.LinkedHashSet[Consumer]],
      k: String,
      c: Consumer
  ): Unit = {
    val same = index.get(k)
    if (same != null) {
      same.remove(c)
      if (same.isEmpty) index.remove(k)
    }
  }

  private def closeAll(consumers: java.util.List[Consumer]): Unit =
    consumers.forEach(c => closeQuietly(c))

  private def key(params: KafkaParams, task: TaskName): String =
    params.cacheKey + "\u0001" + task.name
}
