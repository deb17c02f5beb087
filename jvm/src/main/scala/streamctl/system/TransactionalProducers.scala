package streamctl
package system

import scala.annotation.nowarn

import org.apache.kafka.clients.CommonClientConfigs
import org.apache.kafka.clients.consumer.{ConsumerGroupMetadata, OffsetAndMetadata}
import org.apache.kafka.clients.producer.{KafkaProducer, ProducerConfig}
import org.apache.kafka.common.{KafkaException, TopicPartition}
import org.apache.kafka.common.errors.{
  InterruptException,
  InvalidProducerEpochException,
  ProducerFencedException
}

import streamctl.StreamctlException

/**
 * The transactional ids of one write: writer partition `p` writes as `prefix-writeId-sink-p`.
 * `writeId` is the query's id (kept in its checkpoint, so a restarted query fences the writers of
 * its previous run) or, for a batch write, one id per write. `lasting`: later writes use the ids
 * again (a query's batches), so their producers are worth keeping; a batch write's are not.
 * `lastWriters`: per writer partition, the producer ([[TransactionalProducers.Lease.writer]]) whose
 * commit the driver heard last, so that an executor does not lend a producer another executor's has
 * fenced since.
 *
 * {{{
 * TransactionalIds("streamctl", "5f0c0a52-...", "orders").of(3) // "streamctl-5f0c0a52-...-orders-3"
 * }}}
 */
final case class TransactionalIds(
    prefix: String,
    writeId: String,
    sink: String,
    lasting: Boolean = true,
    lastWriters: Map[Int, Long] = Map.empty
) {

  /**
   * What the ids share (what the driver's [[LastWriters]] are kept by): the same for every batch.
   */
  def key: String = s"$prefix-$writeId-$sink"

  def of(writerPartition: Int): String = s"$key-$writerPartition"
}

/**
 * What the driver heard of the producers that committed each writer partition's batches, per
 * query's ids ([[TransactionalIds.key]]): the writer partition of a batch may run on another
 * executor than its last batch did, whose new producer fences the one the first executor keeps.
 * Kept for the 256 sets of ids used last (a few bytes a writer partition); a driver that forgot
 * (restarted) has new executors, with no producers to doubt.
 *
 * {{{
 * LastWriters.committed(ids.key, Map(0 -> lease.writer))
 * ids.copy(lastWriters = LastWriters.of(ids.key))
 * }}}
 */
object LastWriters {
  private val Kept = 256
  private val byIds = new java.util.LinkedHashMap[String, Map[Int, Long]](16, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[String, Map[Int, Long]]): Boolean =
      size() > Kept
  }

  def of(key: String): Map[Int, Long] = synchronized(Option(byIds.get(key)).getOrElse(Map.empty))

  /** The writer partitions a batch committed, each with the producer that did. */
  def committed(key: String, writers: Map[Int, Long]): Unit =
    if (writers.nonEmpty) synchronized {
      byIds.put(key, Option(byIds.get(key)).getOrElse(Map.empty[Int, Long]) ++ writers)
    }
}

/**
 * Transactional producers per transactional id per executor JVM, each lent to one writer at a time:
 * a writer partition's batch goes out in one Kafka transaction, which also commits, as the offset
 * of consumer group `<transactional id>`, the batch it belongs to.
 *
 * Why a group offset: Spark has no driver-side commit of executor transactions, so the transaction
 * itself must say which batch it wrote. A new producer's `initTransactions` fences every older
 * producer of its id (a retried or speculative Spark task attempt, or the previous run of a
 * restarted query: their commits fail) and ends their open transactions; only then is that group
 * read, with `requireStable`, so it is final. An attempt of a batch that is already committed for
 * its writer partition then writes nothing again. A pooled producer keeps what it knows of its id's
 * last committed batch: anything committed after its own start would have fenced it, so its commit
 * fails rather than write twice.
 *
 * A producer serves one transactional id, so an executor keeps one per writer partition it wrote
 * recently: one idle for [[IdleTimeoutMs]] (5 min, as the consumer pool's default) is closed at the
 * next acquire or release, and its writer partition's next batch starts a new one.
 *
 * {{{
 * val lease = TransactionalProducers.acquire(params, ids.of(partition))
 * if (lease.committedBatch < batch) { lease.begin(batch, "orders"); send(lease.producer); lease.commit(batch) }
 * TransactionalProducers.release(lease, failed = false)
 * }}}
 */
object TransactionalProducers {
  type Producer = KafkaProducer[Array[Byte], Array[Byte]]

  /**
   * A producer of `transactionalId`, lent to one writer. `committedBatch`: the last batch this id
   * committed (-1 for none).
   */
  final class Lease private[TransactionalProducers] (
      val params: KafkaParams,
      val transactionalId: String,
      val producer: Producer,
      @volatile var committedBatch: Long
  ) {

    /** This producer among all of its id's, on any executor. */
    val writer: Long = java.util.concurrent.ThreadLocalRandom.current().nextLong()
    private var open = false
    /* Whether the producer's last transaction ended as Kafka asked: committed, or aborted without
     * an error. One that failed (fenced by a newer writer, aborted by the broker after
     * transaction.timeout.ms, timed out, interrupted) can never begin another, and lent again it
     * would fail every later batch of its writer partition on this executor. */
    @volatile private var ended = true
    @volatile private[TransactionalProducers] var idleSinceNs: Long = System.nanoTime()

    /** Whether a transaction is open (begun, neither committed nor aborted). */
    def inTransaction: Boolean = open

    /** Whether the producer can begin another transaction (see [[release]]). */
    def reusable: Boolean = ended

    // The wait for the batch's marker, sent in the background when the transaction began.
    private var marked: () => Unit = () => ()

    /**
     * Begins a transaction that holds batch `batch`; `topic`: a stream the transaction writes to,
     * whose partition 0 names the group's offset (Kafka keeps group offsets per existing
     * partition). The marker goes out now, from another thread, while the caller sends the records:
     * it is committed with them or not at all either way, and its two requests (AddOffsetsToTxn,
     * TxnOffsetCommit: 5–25 ms on one broker) no longer wait for the last record.
     */
    def begin(batch: Long, topic: String): Unit = if (!open) {
      ended = false
      guard("beginning a transaction")(producer.beginTransaction())
      open = true
      marked = InBackground.ask(InBackground.executor) {
        sendMarker(batch, topic)
        () => ()
      }
    }

    /* A group of its own, with no members: the group id alone says where the offset goes
     * (kafka-clients 4.2 deprecates this constructor for members of a consumer group, which a
     * writer is not). */
    @nowarn("cat=deprecation")
    private def sendMarker(batch: Long, topic: String): Unit = {
      val marker = java.util.Map.of(
        new TopicPartition(topic, 0),
        new OffsetAndMetadata(batch + 1, s"streamctl batch $batch")
      )
      try guard(s"committing batch $batch")(producer.sendOffsetsToTransaction(
          marker,
          new ConsumerGroupMetadata(transactionalId)
        ))
      catch {
        // Kafka says only "Unexpected error in TxnOffsetCommitResponse: Topic authorization
        // failed": a group offset may only name topics the principal can read.
        case e: KafkaException if !e.isInstanceOf[InterruptException] =>
          throw StreamctlException(
            s"Kafka at ${params.bootstrapServers} refused batch $batch's marker under transactional id '$transactionalId' " +
              s"(an offset of consumer group '$transactionalId' on stream '$topic' partition 0, in the transaction): " +
              s"${e.getMessage} (a secured cluster must allow this principal READ on stream '$topic', which a group " +
              "offset names, and on the consumer groups of option 'transactionalIdPrefix')",
            e
          )
      }
    }

    /**
     * Why the open transaction's marker failed, once it has (waiting for it): the producer then
     * refuses every send and the commit, and that refusal says nothing of the cause.
     */
    def markerError: Option[Throwable] =
      if (!open) None else scala.util.Try(marked()).failed.toOption

    /**
     * Commits the open transaction begun for `batch`: its records, flushed by the caller, and its
     * marker.
     */
    def commit(batch: Long): Unit = if (open) {
      marked()
      guard(s"committing batch $batch")(producer.commitTransaction())
      open = false
      committedBatch = batch
      ended = true
    }

    /**
     * Ends the open transaction without its records; a producer that cannot (fenced, closed) leaves
     * it to the next `initTransactions`.
     *
     * A Spark task attempt killed as its query stops aborts on an interrupted thread, where every
     * wait of the producer's throws at once: the abort would never leave, and `read_committed`
     * readers of the stream would stop at the open transaction until the broker ends it
     * (`transaction.timeout.ms`). The interrupt is set aside while aborting, and kept for the
     * caller.
     */
    def abortQuietly(): Unit = if (open) {
      open = false
      val interrupted = Thread.interrupted()
      try {
        // Not while the marker is on its way: the producer refuses to abort during its request.
        try marked()
        catch { case _: Exception => () }
        try { producer.abortTransaction(); ended = true }
        catch { case _: Exception => () }
      } finally if (interrupted) Thread.currentThread().interrupt()
    }

    private def guard[T](what: String)(f: => T): T =
      try f
      catch {
        case e @ (_: ProducerFencedException | _: InvalidProducerEpochException) =>
          throw fenced(what, e)
      }

    /** The error of a producer that a newer one with the same transactional id replaced. */
    def fenced(what: String, cause: Throwable): StreamctlException = StreamctlException(
      s"Kafka at ${params.bootstrapServers} refused $what under transactional id '$transactionalId': a newer writer " +
        "of the same id started (a retried or speculative attempt of this Spark task, or a restart of the query), and " +
        "its records replace this attempt's, which were not committed; or the transaction outlived option " +
        s"'kafka.transaction.timeout.ms' (${params.transactionTimeoutMs} ms) and the broker aborted it",
      cause
    )
  }

  val IdleTimeoutMs: Long = 5 * 60 * 1000L

  private val idle = new java.util.HashMap[String, Lease]()
  private val open = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[
    Producer,
    java.lang.Boolean
  ]())

  sys.addShutdownHook(synchronized(open.forEach(p => closeQuietly(p))))

  /**
   * A producer of `transactionalId` for the caller alone until it gives it back with [[release]].
   * `lastWriter`: the producer whose commit of this id the driver heard last, when it heard one; an
   * idle producer that is not it was fenced by that one (its writer partition ran on another
   * executor since), so a new one starts instead of the writer failing on it.
   */
  def acquire(
      params: KafkaParams,
      transactionalId: String,
      lastWriter: Option[Long]
  ): Lease = {
    val kept = synchronized(idle.remove(key(params, transactionalId)))
    val reused =
      if (kept == null || lastWriter.forall(_ == kept.writer)) kept
      else { discard(kept.producer); null }
    closeIdleExpired()
    if (reused != null) reused else start(params, transactionalId)
  }

  /** [[acquire]] when the driver heard of no commit of this id. */
  def acquire(params: KafkaParams, transactionalId: String): Lease =
    acquire(params, transactionalId, None)

  /**
   * Gives a lease back. Its producer is closed when `failed`, when a transaction is left open or
   * its last one failed to end ([[Lease.reusable]]), or when `keep` is false: a batch write's ids
   * are its own, so no later write could use its producers.
   */
  def release(lease: Lease, failed: Boolean, keep: Boolean): Unit = {
    val close = synchronized {
      if (!open.contains(lease.producer)) true
      else if (failed || !keep || !lease.reusable) { open.remove(lease.producer); true }
      else {
        lease.idleSinceNs = System.nanoTime()
        Option(idle.put(key(lease.params, lease.transactionalId), lease)).foreach(d =>
          discard(d.producer)
        )
        false
      }
    }
    if (close) { lease.abortQuietly(); closeQuietly(lease.producer) }
    closeIdleExpired()
  }

  /** [[release]] of a lease whose ids later writes use again. */
  def release(lease: Lease, failed: Boolean): Unit = release(lease, failed, keep = true)

  private def key(params: KafkaParams, transactionalId: String): String =
    params.cacheKey + "\u0001" + transactionalId

  // One pass over the idle producers per second at most: an executor may keep thousands.
  private var sweptNs = System.nanoTime()

  private def closeIdleExpired(): Unit = {
    val now = System.nanoTime()
    val expired = synchronized {
      val out = new java.util.ArrayList[Producer]()
      val due = now - sweptNs >= 1000000000L
      if (due) sweptNs = now
      val it = if (due) idle.values().iterator() else java.util.Collections.emptyIterator[Lease]()
      while (it.hasNext) {
        val l = it.next()
        if ((now - l.idleSinceNs) / 1000000L >= IdleTimeoutMs) {
          out.add(l.producer); open.remove(l.producer); it.remove()
        }
      }
      out
    }
    expired.forEach(p => closeQuietly(p))
  }

  /** Closes every idle producer and forgets the lent ones (closed when given back). */
  def clear(): Unit = {
    val closing = synchronized {
      val all = new java.util.ArrayList[Producer]()
      idle.values().forEach(l => all.add(l.producer))
      idle.clear()
      open.clear()
      all
    }
    closing.forEach(p => closeQuietly(p))
  }

  /**
   * Ends the open transaction of `transactionalId`, if any, the way a new writer would: a producer
   * of that id starts (fencing the one that opened it) and closes. For operators: a query that died
   * mid-batch leaves one open, holding back `read_committed` readers until it times out.
   */
  def fence(params: KafkaParams, transactionalId: String): Unit = {
    val producer = initialized(startingQuickly(params), transactionalId)
    closeQuietly(producer)
  }

  // A producer of `transactionalId` that has fenced every older one (`params`: startingQuickly's).
  private def initialized(params: KafkaParams, transactionalId: String): Producer = {
    val settings = params.producer
    settings.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId)
    settings.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true")
    val producer = params.newClient("transactional producer")(new KafkaProducer[
      Array[Byte],
      Array[Byte]
    ](settings))
    try producer.initTransactions()
    catch {
      case _: org.apache.kafka.common.errors.TimeoutException =>
        closeQuietly(producer)
        throw params.apiWait.exceeded(
          s"starting transactions under transactional id '$transactionalId'"
        )
      case e: org.apache.kafka.common.KafkaException =>
        closeQuietly(producer)
        throw StreamctlException(
          s"Kafka at ${params.bootstrapServers} refused transactional id '$transactionalId': ${e.getMessage} " +
            "(a secured cluster must allow this principal WRITE and DESCRIBE on the transactional ids of option " +
            "'transactionalIdPrefix', and READ on the consumer groups of the same names)",
          e
        )
    }
    producer
  }

  private def start(params: KafkaParams, transactionalId: String): Lease = {
    // Made once: a KafkaParams checks every setting with Kafka's parsers as it is made.
    val quick = startingQuickly(params)
    val producer = initialized(quick, transactionalId)
    synchronized(open.add(producer))
    try {
      val admin = KafkaSystemAdmin(quick)
      val committed =
        try admin.stableGroupOffsets(
            transactionalId
          ).values.map(_.offset - 1).maxOption.getOrElse(-1L)
        finally admin.close()
      new Lease(params, transactionalId, producer, committed)
    } catch {
      case e: Throwable =>
        synchronized(open.remove(producer))
        closeQuietly(producer)
        throw e
    }
  }

  /**
   * Starting a producer of a new transactional id, and reading its group right after, meets
   * requests that Kafka retries, and its first retry waits `retry.backoff.ms`, 100 ms. Measured on
   * one broker (kafka-clients 4.3.1, 2026-11-28): `initTransactions` took 200–240 ms with that
   * default and 73–83 ms with 10 ms, the group read 110 against 50–75 ms. Every writer partition of
   * a run starts one, two at a time on two cores, before its first batch can commit. Later retries
   * still grow to `retry.backoff.max.ms` (1 s), so an unreachable broker is not asked more often
   * than that; a `kafka.retry.backoff.ms` the user set wins. Kafka clients older than 3.7 (Spark
   * 3.5's 3.4) retry at a fixed interval: those keep Kafka's default.
   */
  private def startingQuickly(params: KafkaParams): KafkaParams =
    if (params.user.contains(CommonClientConfigs.RETRY_BACKOFF_MS_CONFIG) || !backoffGrows) params
    else KafkaParams(params.user.updated(CommonClientConfigs.RETRY_BACKOFF_MS_CONFIG, FirstRetryMs))

  private val FirstRetryMs = "10"
  // KIP-580's exponential backoff (kafka-clients 3.7+) brought this setting.
  private lazy val backoffGrows = ProducerConfig.configNames().contains("retry.backoff.max.ms")

  /** Forgets `p` and closes it: a producer no writer may be lent again. */
  private def discard(p: Producer): Unit = { synchronized(open.remove(p)); closeQuietly(p) }

  private def closeQuietly(p: Producer): Unit =
    try p.close(java.time.Duration.ZERO)
    catch { case _: Exception => () }
}
