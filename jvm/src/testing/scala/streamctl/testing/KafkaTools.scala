package streamctl.testing

import java.util.concurrent.TimeUnit.MILLISECONDS
import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.kafka.clients.admin.{Admin, NewPartitions, NewTopic, OffsetSpec, RecordsToDelete}
import org.apache.kafka.clients.producer.{
  Callback,
  KafkaProducer,
  ProducerConfig,
  ProducerRecord,
  RecordMetadata
}
import org.apache.kafka.common.TopicPartition

import streamctl.StreamctlException
import streamctl.system.{KafkaParams, KafkaSystemAdmin, SSP}

/**
 * Small Kafka operations for the demo, tests and benchmarks, called over py4j, so Python needs no
 * Kafka client of its own. Lists come from Python as java.util.List; a null partition lets Kafka
 * choose, a null timestamp means "now". Part of streamctl-testing, not of the product: a cluster
 * running streamctl never creates, fills or deletes topics with it.
 *
 * {{{
 * KafkaTools.createStream("127.0.0.1:9092", "orders", 4)
 * }}}
 */
object KafkaTools {
  private val TimeoutMs = KafkaParams.DefaultApiTimeoutMs

  private def params(servers: String) = KafkaParams(Map("bootstrap.servers" -> servers))

  /** Client settings for `servers`, for tests that drive a product class through py4j. */
  def kafkaParams(servers: String): KafkaParams = params(servers)

  /** The same with one Kafka setting more (e.g. a stand-in producer's `transaction.timeout.ms`). */
  def kafkaParams(servers: String, key: String, value: String): KafkaParams =
    KafkaParams(Map("bootstrap.servers" -> servers, key -> value))

  private def withAdmin[T](servers: String)(f: KafkaSystemAdmin => T): T = {
    val a = KafkaSystemAdmin(params(servers))
    try f(a)
    finally a.close()
  }

  private def withKafkaAdmin[T](servers: String)(f: Admin => T): T = {
    val a = Admin.create(params(servers).admin)
    try f(a)
    finally a.close()
  }

  /** Creates a stream (replication factor 1); returns once every partition takes writes. */
  def createStream(servers: String, stream: String, partitions: Int): Unit =
    createStream(servers, stream, partitions, 1)

  /**
   * The same with `replicas` copies of every partition (a cluster of that many brokers or more).
   */
  def createStream(servers: String, stream: String, partitions: Int, replicas: Int): Unit =
    withKafkaAdmin(servers) { a =>
      val deadline = System.currentTimeMillis() + TimeoutMs
      def create(): Unit =
        try a.createTopics(java.util.Collections.singletonList(new NewTopic(
            stream,
            partitions,
            replicas.toShort
          ))).all().get(TimeoutMs, MILLISECONDS)
        catch {
          /* A test broker that missed its controller's heartbeats for its session timeout (3 s,
           * kept short for the restart tests) under a loaded machine is fenced until its next
           * heartbeat, and KRaft refuses new topics meanwhile ("All brokers are currently fenced"):
           * the broker's stall, not the test's subject. */
          case e: java.util.concurrent.ExecutionException
              if e.getCause.isInstanceOf[
                org.apache.kafka.common.errors.InvalidReplicationFactorException
              ] && String.valueOf(e.getCause.getMessage).contains("fenced") &&
                System.currentTimeMillis() < deadline =>
            Thread.sleep(200)
            create()
        }
      create()
      awaitServed(a, servers, stream, partitions)
    }

  /** Per partition of `stream`, the node id of its leader (-1 while it has none). */
  def leaders(servers: String, stream: String): java.util.Map[Integer, Integer] =
    withKafkaAdmin(servers)(a =>
      leaderIds(a, stream).map { case (p, n) => Integer.valueOf(p) -> Integer.valueOf(n) }.asJava
    )

  private def leaderIds(a: Admin, stream: String): Map[Int, Int] = {
    val topic = a.describeTopics(java.util.Collections.singletonList(stream)).allTopicNames().get(
      TimeoutMs,
      MILLISECONDS
    ).get(stream)
    topic.partitions().asScala.map { p =>
      p.partition() -> Option(p.leader()).filterNot(_.isEmpty).fold(-1)(_.id())
    }.toMap
  }

  /**
   * Per transactional id that contains `part` (a sink writes under ids naming its topic), the node
   * id of its transaction coordinator.
   */
  def transactionCoordinators(servers: String, part: String): java.util.Map[String, Integer] =
    withKafkaAdmin(servers) { a =>
      val ids = a.listTransactions().all().get(TimeoutMs, MILLISECONDS).asScala
        .map(_.transactionalId()).filter(_.contains(part)).toList
      if (ids.isEmpty) java.util.Map.of[String, Integer]()
      else a.describeTransactions(ids.asJava).all().get(TimeoutMs, MILLISECONDS).asScala.map {
        case (id, d) => id -> Integer.valueOf(d.coordinatorId())
      }.toMap.asJava
    }

  /**
   * Adds partitions to a stream (partition expansion); returns once every partition takes writes.
   */
  def growStream(servers: String, stream: String, partitions: Int): Unit =
    withKafkaAdmin(servers) { a =>
      a.createPartitions(java.util.Map.of(stream, NewPartitions.increaseTo(partitions))).all().get(
        TimeoutMs,
        MILLISECONDS
      )
      awaitServed(a, servers, stream, partitions)
    }

  /**
   * Waits until the leader of every partition serves it. Kafka acknowledges a new topic or
   * partition once the controller recorded it, before the leader hosts it; an idempotent producer
   * writing at once can have its first batch of a partition refused and a later one accepted, and
   * then never gets the first one in (out-of-order sequence until `delivery.timeout.ms`: records
   * lost for a tool, a failed task for a query's sink).
   */
  private def awaitServed(a: Admin, servers: String, stream: String, partitions: Int): Unit = {
    val specs = (0 until partitions).map(p =>
      new TopicPartition(stream, p) -> OffsetSpec.latest()
    ).toMap.asJava
    val deadline = System.nanoTime() + TimeoutMs * 1000000L
    // Leaders first: kafka-clients' listOffsets logs an ERROR (with its exception) for a topic the
    // broker's metadata does not have yet, which a demo's first run then shows; describeTopics
    // answers the same question quietly.
    def led = Try(leaderIds(a, stream)).toOption.exists(l =>
      l.size == partitions && l.values.forall(_ >= 0)
    )
    while (!led || Try(a.listOffsets(specs).all().get(TimeoutMs, MILLISECONDS)).isFailure) {
      if (System.nanoTime() > deadline) throw StreamctlException(
        s"Kafka at $servers: the leaders of stream '$stream' did not serve its $partitions partitions within $TimeoutMs ms"
      )
      Thread.sleep(50)
    }
  }

  def partitionCount(servers: String, stream: String): Int =
    withAdmin(servers)(_.partitionCounts(Set(stream))(stream))

  /** The Kafka topic ID of `stream`, as streamctl records it in a query's offsets. */
  def topicId(servers: String, stream: String): String =
    withAdmin(servers)(_.describeStreams(Set(stream))(stream).id.getOrElse(
      throw StreamctlException(s"Kafka at $servers has no topic ID for stream '$stream'")
    ))

  /** Next offset of every partition of `stream`, by partition. */
  def upcomingOffsets(servers: String, stream: String): java.util.Map[Integer, java.lang.Long] =
    withAdmin(servers) { a =>
      val n = a.partitionCounts(Set(stream))(stream)
      a.upcomingOffsets((0 until n).map(SSP.kafka(stream, _)).toSet)
        .map { case (s, o) => Integer.valueOf(s.partition) -> java.lang.Long.valueOf(o) }.asJava
    }

  /** Writes plain (unframed) records; returns how many. */
  def produce(
      servers: String,
      stream: String,
      partitions: java.util.List[Integer],
      keys: java.util.List[Array[Byte]],
      values: java.util.List[Array[Byte]],
      timestamps: java.util.List[Number]
  ): Int = {
    val n = values.size()
    sendAll(servers, stream, n) { (p, sent) =>
      (0 until n).foreach { i =>
        // py4j passes small Python ints as Integer: widen here, for every caller.
        val ts = at(timestamps, i)
        val millis = if (ts == null) null else java.lang.Long.valueOf(ts.longValue)
        p.send(
          new ProducerRecord[Array[Byte], Array[Byte]](
            stream,
            at(partitions, i),
            millis,
            at(keys, i),
            values.get(i)
          ),
          sent
        )
      }
    }
    n
  }

  /**
   * Writes `values` to one partition in one Kafka transaction of its own, then commits or aborts
   * it: the records and the marker a transactional writer leaves, for tests of `read_committed`
   * readers.
   */
  def produceTransaction(
      servers: String,
      stream: String,
      partition: Int,
      values: java.util.List[Array[Byte]],
      commit: Boolean
  ): Unit = {
    val settings = params(servers).producer
    settings.put(
      ProducerConfig.TRANSACTIONAL_ID_CONFIG,
      s"streamctl-testing-${java.util.UUID.randomUUID()}"
    )
    val p = new KafkaProducer[Array[Byte], Array[Byte]](settings)
    val sent = new SendCheck
    try {
      p.initTransactions()
      p.beginTransaction()
      values.forEach { v =>
        p.send(
          new ProducerRecord[Array[Byte], Array[Byte]](stream, Integer.valueOf(partition), null, v),
          sent
        )
      }
      p.flush()
      sent.check(servers, stream, values.size().toLong)
      if (commit) p.commitTransaction() else p.abortTransaction()
    } finally p.close()
    // The coordinator writes the transaction's marker to the partition only after commit or abort
    // returned: callers count on the partition ending with it.
    if (!values.isEmpty) awaitEnd(servers, SSP.kafka(stream, partition), sent.highestOffset + 2)
  }

  /* Until `ssp`'s next offset is `end` or later. */
  private def awaitEnd(servers: String, ssp: SSP, end: Long): Unit = withAdmin(servers) { a =>
    val deadline = System.nanoTime() + MILLISECONDS.toNanos(TimeoutMs)
    while (a.upcomingOffsets(Set(ssp))(ssp) < end) {
      if (System.nanoTime() > deadline) throw StreamctlException(
        s"Kafka at $servers: $ssp did not reach offset $end (its transaction's marker) in $TimeoutMs ms"
      )
      Thread.sleep(10)
    }
  }

  /** Writes one plain record carrying headers. */
  def produceWithHeaders(
      servers: String,
      stream: String,
      value: Array[Byte],
      headerKeys: java.util.List[String],
      headerValues: java.util.List[Array[Byte]]
  ): Unit = {
    val p = producer(servers)
    try {
      val r = new ProducerRecord[Array[Byte], Array[Byte]](stream, null, value)
      (0 until headerKeys.size()).foreach(i =>
        r.headers().add(headerKeys.get(i), headerValues.get(i))
      )
      p.send(r).get()
    } finally p.close()
  }

  /**
   * Writes `count` records of `valueSize` bytes, keys "0".."count-1", spread evenly over the
   * partitions.
   */
  def produceSynthetic(servers: String, stream: String, count: Long, valueSize: Int): Long =
    produceRepeated(servers, stream, count, syntheticValue(valueSize))

  /** The value every synthetic record carries: `size` letters. */
  def syntheticValue(size: Int): Array[Byte] =
    Array.tabulate[Byte](size)(i => ('a' + i % 26).toByte)

  /** Writes `count` records with the same `value`, keys "0".."count-1", partition i mod n. */
  def produceRepeated(servers: String, stream: String, count: Long, value: Array[Byte]): Long = {
    val n = partitionCount(servers, stream)
    sendAll(servers, stream, count) { (p, sent) =>
      var i = 0L
      while (i < count) {
        p.send(
          new ProducerRecord[Array[Byte], Array[Byte]](
            stream,
            Integer.valueOf((i % n).toInt),
            i.toString.getBytes,
            value
          ),
          sent
        )
        i += 1
      }
    }
    count
  }

  /** Raw values of a partition from `from` to its current end (tests check framing with it). */
  def readRaw(
      servers: String,
      stream: String,
      partition: Int,
      from: Long
  ): java.util.List[Array[Byte]] =
    readValues(params(servers), stream, partition, from)

  /**
   * Raw values of a partition as a plain `KafkaConsumer` with `isolation.level=read_committed`
   * reads them, to its last stable offset: what an independent reader of a transactional sink sees.
   */
  def readCommitted(servers: String, stream: String, partition: Int): java.util.List[Array[Byte]] =
    readValues(
      KafkaParams(Map("bootstrap.servers" -> servers, "isolation.level" -> "read_committed")),
      stream,
      partition,
      0L
    )

  private def readValues(
      params: KafkaParams,
      stream: String,
      partition: Int,
      from: Long
  ): java.util.List[Array[Byte]] = {
    val c =
      new org.apache.kafka.clients.consumer.KafkaConsumer[Array[Byte], Array[Byte]](params.consumer)
    try {
      val tp = new TopicPartition(stream, partition)
      c.assign(java.util.Collections.singletonList(tp))
      val end = c.endOffsets(java.util.Collections.singletonList(tp)).get(tp).longValue()
      c.seek(tp, from)
      val out = new java.util.ArrayList[Array[Byte]]()
      val deadline = System.currentTimeMillis() + 30000
      while (c.position(tp) < end && System.currentTimeMillis() < deadline)
        c.poll(java.time.Duration.ofMillis(200)).forEach(r => out.add(r.value()))
      out
    } finally c.close()
  }

  /**
   * Every record of a partition as a plain `KafkaConsumer` sees it: per record a list of key, value
   * (either may be null) and then header key and value pairs.
   */
  def readRecords(
      servers: String,
      stream: String,
      partition: Int
  ): java.util.List[java.util.List[Any]] = {
    val c = new org.apache.kafka.clients.consumer.KafkaConsumer[
      Array[Byte],
      Array[Byte]
    ](params(servers).consumer)
    try {
      val tp = new TopicPartition(stream, partition)
      c.assign(java.util.Collections.singletonList(tp))
      val end = c.endOffsets(java.util.Collections.singletonList(tp)).get(tp).longValue()
      c.seekToBeginning(java.util.Collections.singletonList(tp))
      val out = new java.util.ArrayList[java.util.List[Any]]()
      val deadline = System.currentTimeMillis() + 30000
      while (c.position(tp) < end && System.currentTimeMillis() < deadline)
        c.poll(java.time.Duration.ofMillis(200)).forEach { r =>
          val record = new java.util.ArrayList[Any]()
          record.add(r.key())
          record.add(r.value())
          r.headers().forEach { h => record.add(h.key()); record.add(h.value()) }
          out.add(record)
        }
      out
    } finally c.close()
  }

  /**
   * A live member of consumer group `group`, as another application sharing the group id would be:
   * a plain `KafkaConsumer` subscribed to `stream`, returned once the group assigned it partitions.
   * It stays a member (the client heartbeats on a thread of its own) until closed, which leaves the
   * group at once.
   */
  def groupMember(servers: String, stream: String, group: String): AutoCloseable = {
    val conf = KafkaParams(Map("bootstrap.servers" -> servers, "group.id" -> group)).consumer
    conf.put("auto.offset.reset", "latest") // a new group has no offsets to start from
    val c = new org.apache.kafka.clients.consumer.KafkaConsumer[Array[Byte], Array[Byte]](conf)
    try {
      c.subscribe(java.util.Collections.singletonList(stream))
      val deadline = System.currentTimeMillis() + 60000
      while (c.assignment().isEmpty) {
        if (System.currentTimeMillis() > deadline)
          throw new IllegalStateException(
            s"Group '$group' assigned no partition of '$stream' in 60 s"
          )
        c.poll(java.time.Duration.ofMillis(200))
      }
      c
    } catch { case e: Throwable => c.close(); throw e }
  }

  /** Deletes the records of a partition before `offset`, as retention would. */
  def deleteRecordsBefore(servers: String, stream: String, partition: Int, offset: Long): Unit =
    withKafkaAdmin(servers) {
      _.deleteRecords(java.util.Map.of(
        new TopicPartition(stream, partition),
        RecordsToDelete.beforeOffset(offset)
      )).all().get()
    }

  /** Deletes a stream (tests re-create it smaller, as a mistaken re-creation would). */
  def deleteStream(servers: String, stream: String): Unit =
    withKafkaAdmin(servers)(_.deleteTopics(java.util.Collections.singletonList(stream)).all().get())

  /**
   * Runs `send` with a fresh producer and the callback to pass to every `send`, flushes, and fails
   * naming the stream if any of the `count` records failed: `flush` returns even when records
   * failed.
   */
  private def sendAll(servers: String, stream: String, count: Long)(
      send: (KafkaProducer[Array[Byte], Array[Byte]], Callback) => Unit
  ): Unit = {
    val p = producer(servers)
    try {
      val sent = new SendCheck
      send(p, sent)
      p.flush()
      sent.check(servers, stream, count)
    } finally p.close()
  }

  /**
   * Counts failed sends: a future per record of a multi-million-record write would cost more memory
   * than the records.
   */
  private final class SendCheck extends Callback {
    private val failed = new AtomicLong
    private val highest = new AtomicLong(-1L)
    @volatile private var first: Exception = _

    override def onCompletion(m: RecordMetadata, e: Exception): Unit =
      if (e != null) { if (failed.getAndIncrement() == 0) first = e }
      else highest.accumulateAndGet(m.offset(), math.max(_, _))

    /** The highest offset a record was written at; -1 before any. */
    def highestOffset: Long = highest.get

    def check(servers: String, stream: String, of: Long): Unit =
      if (failed.get > 0) throw StreamctlException(
        s"Writing to stream '$stream' on Kafka at $servers: ${failed.get} of " +
          s"$of records failed, the first with: ${first.getMessage}",
        first
      )
  }

  private def producer(servers: String) =
    new KafkaProducer[Array[Byte], Array[Byte]](params(servers).producer)

  private def at[T <: AnyRef](l: java.util.List[T], i: Int): T =
    if (l == null) null.asInstanceOf[T] else l.get(i)
}
