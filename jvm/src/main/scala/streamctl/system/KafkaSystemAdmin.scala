package streamctl
package system

import java.util.concurrent.{ExecutionException, TimeUnit, TimeoutException}

import scala.jdk.CollectionConverters._

import org.apache.kafka.clients.admin.{
  Admin,
  ListConsumerGroupOffsetsOptions,
  ListConsumerGroupOffsetsSpec,
  ListOffsetsOptions,
  ListOffsetsResult,
  OffsetSpec
}
import org.apache.kafka.common.{TopicPartition, Uuid}
import org.apache.kafka.common.config.ConfigResource
import org.apache.kafka.common.errors.{AuthenticationException, UnknownTopicOrPartitionException}

import streamctl.StreamctlException

/**
 * The admin side of Kafka: partition counts and offsets, in bulk (one request per kind, whatever
 * the number of SSPs). Every call waits at most `kafka.default.api.timeout.ms` and then fails
 * naming the servers, so an unreachable broker never hangs a query.
 *
 * {{{
 * val admin = KafkaSystemAdmin(KafkaParams(Map("bootstrap.servers" -> servers)))
 * admin.upcomingOffsets(Set(SSP.kafka("orders", 0)))
 * }}}
 */
class KafkaSystemAdmin(val params: KafkaParams) extends SystemAdmin with AutoCloseable {
  import KafkaSystemAdmin.AutoCreateTopics

  override val system: String = SSP.KafkaSystem

  // Created on first use: building a planner must not open connections it may never need.
  private var adminRef: Admin = _
  private val watch = new BootstrapWatch(params.bootstrapServers, params.apiWait)
  private def admin: Admin = synchronized {
    if (adminRef == null) {
      adminRef = params.newClient("admin client")(Admin.create(params.admin))
      watch.start()
    }
    adminRef
  }

  override def partitionCounts(streams: Set[String]): Map[String, Int] =
    describeStreams(streams).map { case (s, d) => s -> d.partitions }

  override def describeStreams(streams: Set[String]): Map[String, StreamDescription] = {
    if (streams.isEmpty) return Map.empty
    val described = call(s"describing streams ${streams.toSeq.sorted.mkString(", ")}") {
      admin.describeTopics(streams.asJava).allTopicNames()
    }
    described.asScala.map { case (name, d) =>
      // A broker too old to know topic IDs answers the zero UUID: no identity, not a shared one.
      val id = Option(d.topicId()).filter(_ != Uuid.ZERO_UUID).map(_.toString)
      name -> StreamDescription(d.partitions().size(), id)
    }.toMap
  }

  override def oldestOffsets(ssps: Set[SSP]): Map[SSP, Long] =
    listOffsets(ssps.map(_ -> OffsetSpec.earliest()).toMap)

  override def upcomingOffsets(ssps: Set[SSP]): Map[SSP, Long] =
    listOffsets(ssps.map(_ -> OffsetSpec.latest()).toMap)

  override def upcomingOffsetsAsked(ssps: Set[SSP]): () => Map[SSP, Long] = {
    if (ssps.isEmpty) return () => Map.empty
    val result = admin.listOffsets(
      ssps.map(s => topicPartition(s) -> OffsetSpec.latest()).toMap.asJava,
      listOptions
    )
    lazy val what = s"listing offsets of ${describe(ssps)}"
    lazy val answer = ssps.flatMap { ssp =>
      try Some(ssp -> call(what)(result.partitionResult(topicPartition(ssp))).offset())
      catch {
        case e: StreamctlException if SystemAdmin.streamGone(e) =>
          None
      }
    }.toMap
    () => answer
  }

  // Kafka's ListOffsets for the max timestamp (brokers 3.0+, KIP-734): one request per broker for
  // every SSP, answered from the broker's index without reading a record.
  override def newestTimestampsAsked(ssps: Set[SSP]): () => Map[SSP, Long] = {
    if (ssps.isEmpty) return () => Map.empty
    val result = admin.listOffsets(
      ssps.map(s => topicPartition(s) -> OffsetSpec.maxTimestamp()).toMap.asJava,
      listOptions
    )
    lazy val answer = call(s"listing the newest record times of ${describe(ssps)}")(result.all())
      .asScala.collect {
        case (tp, info) if info.timestamp() >= 0 =>
          SSP.kafka(tp.topic, tp.partition) -> info.timestamp()
      }.toMap
    () => answer
  }

  override def offsetsForTimestamps(timestamps: Map[SSP, Long]): Map[SSP, Long] = {
    val found = offsetsAtOrAfter(timestamps)
    // No record has a timestamp >= ts: the position is then the end.
    val missing = found.collect { case (ssp, None) => ssp }.toSet
    val ends = if (missing.isEmpty) Map.empty[SSP, Long] else upcomingOffsets(missing)
    found.map { case (ssp, o) => ssp -> o.getOrElse(ends(ssp)) }
  }

  // Kafka answers -1 when no record has a timestamp >= ts.
  override def offsetsAtOrAfter(timestamps: Map[SSP, Long]): Map[SSP, Option[Long]] =
    listOffsets(timestamps.map { case (ssp, ts) => ssp -> OffsetSpec.forTimestamp(ts) }).map {
      case (s, o) => s -> Some(o).filter(_ >= 0)
    }

  /**
   * Fails, naming `stream`, the servers and `why` it is written, when a producer writing to it
   * would wait `max.block.ms` (60 s) for a topic that never comes: it does not exist and the broker
   * does not create topics at their first write (`auto.create.topics.enable=false`). When the
   * broker's setting cannot be read (no DescribeConfigs right), the write goes ahead: a broker that
   * does create it must keep working, and one that does not fails the first send with
   * [[KafkaSystemAdmin.missingStream]]. It is a check the writers make again anyway: what keeps
   * this process from telling whether the stream exists (the broker does not answer it, or refuses)
   * is returned rather than thrown.
   */
  def checkWritable(stream: String, why: String): Option[String] =
    (try Right(exists(stream))
    catch { case e: StreamctlException => Left(e.getMessage) }) match {
      case Right(false) if autoCreatesStreams().contains(false) =>
        throw missingStream(stream, why, Some(false))
      case Right(_) => None
      case Left(unknown) => Some(unknown)
    }

  /** Whether `stream` exists; other failures (unreachable, refused) are errors as in every call. */
  def exists(stream: String): Boolean =
    try { describeStreams(Set(stream)); true }
    catch {
      case e: StreamctlException if SystemAdmin.streamGone(e) =>
        false
    }

  /** The broker's `auto.create.topics.enable`; None when these credentials may not read it. */
  def autoCreatesStreams(): Option[Boolean] =
    brokerSetting(AutoCreateTopics).flatMap(_.trim.toBooleanOption)

  /**
   * The error for a write to `stream`, which does not exist; `autoCreates`: what the broker says of
   * creating it.
   */
  def missingStream(
      stream: String,
      why: String,
      autoCreates: Option[Boolean],
      cause: Throwable = null
  ): StreamctlException = {
    val broker = autoCreates match {
      case Some(false) =>
        s"and the broker does not create topics at their first write ($AutoCreateTopics=false)"
      case Some(true) =>
        s"although the broker creates topics at their first write ($AutoCreateTopics=true), it did not create this one"
      case None =>
        s"and whether the broker creates topics at their first write ($AutoCreateTopics) could not be read"
    }
    StreamctlException(
      s"Stream '$stream' does not exist on Kafka at ${params.bootstrapServers} ($why), $broker: " +
        "create the topic first (kafka-topics --create), or write to one that exists",
      cause
    )
  }

  override def listStreams(): Set[String] =
    call("listing topics")(admin.listTopics().names()).asScala.toSet

  private def listOffsets(specs: Map[SSP, OffsetSpec]): Map[SSP, Long] = {
    if (specs.isEmpty) return Map.empty
    val byTp = specs.map { case (ssp, spec) =>
      new TopicPartition(ssp.stream, ssp.partition) -> spec
    }
    val result: java.util.Map[TopicPartition, ListOffsetsResult.ListOffsetsResultInfo] =
      call(s"listing offsets of ${describe(specs.keySet)}")(admin.listOffsets(
        byTp.asJava,
        listOptions
      ).all())
    specs.keys.map { ssp =>
      val info = result.get(new TopicPartition(ssp.stream, ssp.partition))
      if (info == null) throw StreamctlException(
        s"Kafka at ${params.bootstrapServers} returned no offset for stream '${ssp.stream}' partition ${ssp.partition}"
      )
      ssp -> info.offset()
    }.toMap
  }

  private def topicPartition(ssp: SSP) = new TopicPartition(ssp.stream, ssp.partition)

  /* A read_committed reader can read up to the last stable offset only: its latest offsets are
   * those. */
  private def listOptions = new ListOffsetsOptions(params.isolationLevel)

  /**
   * The offsets committed to consumer group `group`, once every transaction that commits to it
   * ended (`requireStable`): a transactional writer's record of the batches it committed
   * ([[TransactionalProducers]]). Empty for a group that never committed.
   */
  def stableGroupOffsets(group: String)
      : Map[TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata] = {
    val spec = java.util.Map.of(group, new ListConsumerGroupOffsetsSpec())
    val answer = call(s"reading the committed offsets of consumer group '$group'")(
      admin.listConsumerGroupOffsets(
        spec,
        new ListConsumerGroupOffsetsOptions().requireStable(true)
      ).partitionsToOffsetAndMetadata(group)
    )
    answer.asScala.collect { case (tp, o) if o != null => tp -> o }.toMap
  }

  /**
   * The transactions whose transactional id starts with `idPrefix`, as their coordinators describe
   * them now (ended ones included: their state says so).
   */
  def transactions(idPrefix: String): Seq[TransactionState] = {
    val ids = call("listing transactions")(
      admin.listTransactions().all()
    ).asScala.toSeq.map(_.transactionalId).filter(_.startsWith(idPrefix))
    if (ids.isEmpty) return Seq.empty
    val described = call(
      s"describing transactions ${ids.sorted.mkString(", ")}"
    )(admin.describeTransactions(ids.asJava).all())
    described.asScala.toSeq.sortBy(_._1).map { case (id, d) =>
      val started = d.transactionStartTimeMs()
      TransactionState(
        id,
        d.state().toString,
        if (started.isPresent) Some(started.getAsLong) else None,
        d.topicPartitions().asScala.toSeq.map(tp => SSP.kafka(tp.topic, tp.partition)).sorted
      )
    }
  }

  /**
   * Sets the committed offsets of consumer group `group` (which must have no live member) to
   * `next`.
   */
  def commitGroupOffsets(group: String, next: Map[SSP, Long]): Unit = if (next.nonEmpty) {
    val offsets = next.map { case (ssp, o) =>
      topicPartition(ssp) -> new org.apache.kafka.clients.consumer.OffsetAndMetadata(o)
    }
    call(s"committing offsets to consumer group '$group'")(admin.alterConsumerGroupOffsets(
      group,
      offsets.asJava
    ).all())
  }

  /**
   * A setting of the broker (the first one the cluster lists); None when these credentials may not
   * read it.
   */
  def brokerSetting(name: String): Option[String] =
    try {
      val node = admin.describeCluster().nodes().get(
        params.apiTimeoutMs,
        TimeUnit.MILLISECONDS
      ).asScala.headOption
      node.flatMap { n =>
        val broker = new ConfigResource(ConfigResource.Type.BROKER, n.idString)
        val configs = admin.describeConfigs(java.util.Collections.singletonList(broker)).all().get(
          params.apiTimeoutMs,
          TimeUnit.MILLISECONDS
        )
        Option(configs.get(broker)).flatMap(c => Option(c.get(name))).flatMap(e => Option(e.value))
      }
    } catch { case _: ExecutionException | _: TimeoutException => None }

  private def describe(ssps: Set[SSP]): String = {
    val sorted = ssps.toSeq.sorted
    if (sorted.size <= 4) sorted.mkString(", ")
    else s"${sorted.take(4).mkString(", ")} and ${sorted.size - 4} more"
  }

  /* `what` is only for an error: by name, since describing thousands of SSPs per partition asked is
   * quadratic. */
  private def call[T](what: => String)(f: => org.apache.kafka.common.KafkaFuture[T]): T =
    try { val answer = f.get(params.apiTimeoutMs, TimeUnit.MILLISECONDS); watch.answered(); answer }
    catch {
      // Our wait and the client's own timeout race; either way the broker did not answer.
      case _: TimeoutException => throw unreachable(what)
      case e: ExecutionException => e.getCause match {
          case _: org.apache.kafka.common.errors.TimeoutException => throw unreachable(what)
          case a: AuthenticationException => throw params.authenticationFailed(what, a)
          case u: UnknownTopicOrPartitionException =>
            throw StreamctlException(
              s"Kafka at ${params.bootstrapServers}: a stream does not exist while $what (${u.getMessage})",
              u
            )
          case c =>
            throw StreamctlException(
              s"Kafka at ${params.bootstrapServers} failed while $what: ${c.getClass.getSimpleName}: ${c.getMessage}",
              c
            )
        }
    }

  private def unreachable(what: String) = params.apiWait.exceeded(what)

  override def close(): Unit = synchronized {
    watch.cancel()
    if (adminRef != null) adminRef.close(java.time.Duration.ofSeconds(5))
    adminRef = null
  }
}

object KafkaSystemAdmin {
  private val AutoCreateTopics = "auto.create.topics.enable"
  // How long the question after a failed send may take: the broker may be the reason it failed.
  private val AfterFailureTimeoutMs = "5000"

  /**
   * Why a send to `stream` timed out, when the reason is that the stream does not exist (the
   * producer says only "not present in metadata" after `max.block.ms`): the error naming it and
   * `why` it was written. None when it exists or the broker does not answer in a few seconds.
   */
  def missingAfterTimeout(
      params: KafkaParams,
      stream: String,
      why: String,
      cause: Throwable
  ): Option[StreamctlException] = {
    val admin = KafkaSystemAdmin(params.copy(user =
      params.user ++ Map(
        org.apache.kafka.clients.CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG -> AfterFailureTimeoutMs
      )
    ))
    try if (admin.exists(stream)) None
      else Some(admin.missingStream(stream, why, admin.autoCreatesStreams(), cause))
    catch { case _: StreamctlException => None }
    finally admin.close()
  }

  def apply(params: KafkaParams): KafkaSystemAdmin = new KafkaSystemAdmin(params)
}

/**
 * One Kafka transaction as its coordinator describes it: `state` in Kafka's words (`Ongoing`,
 * `CompleteCommit`, `PrepareAbort`, ...), when the open one started, and the SSPs it wrote.
 */
final case class TransactionState(
    transactionalId: String,
    state: String,
    startedMs: Option[Long],
    ssps: Seq[SSP]
) {

  /** Still open: its records hold back every read_committed reader of its partitions. */
  def open: Boolean = state == "Ongoing" || state.startsWith("Prepare")
}
