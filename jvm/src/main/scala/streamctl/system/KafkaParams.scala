package streamctl
package system

import java.net.{InetAddress, UnknownHostException}

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.kafka.clients.CommonClientConfigs
import org.apache.kafka.clients.admin.AdminClientConfig
import org.apache.kafka.clients.consumer.ConsumerConfig
import org.apache.kafka.clients.producer.ProducerConfig
import org.apache.kafka.common.{IsolationLevel, KafkaException}
import org.apache.kafka.common.config.SaslConfigs
import org.apache.kafka.common.errors.AuthenticationException
import org.apache.kafka.common.serialization.{ByteArrayDeserializer, ByteArraySerializer}
import org.apache.kafka.common.utils.Utils

import streamctl.StreamctlException

/**
 * Client settings derived from the user's `kafka.*` options (prefix stripped), checked when the
 * options are parsed on the driver: every value goes through Kafka's own config parser (the
 * consumer's, producer's and admin client's), and a value it refuses fails with Kafka's message and
 * the option's name. streamctl owns offsets and (de)serialization, so the settings that would fight
 * it are refused rather than silently overridden.
 *
 * How long the clients wait for an unreachable broker derives from one setting,
 * `kafka.default.api.timeout.ms` (Kafka's default, 60 s): admin calls ([[apiWait]]), the consumer's
 * own calls, the producer's `max.block.ms` and `delivery.timeout.ms` ([[deliveryWait]]), unless the
 * user sets those Kafka options themselves.
 *
 * {{{
 * val p = KafkaParams(Map("bootstrap.servers" -> "127.0.0.1:9092"))
 * val consumer = p.newClient("consumer")(new KafkaConsumer[Array[Byte], Array[Byte]](p.consumer))
 * }}}
 */
final case class KafkaParams(user: Map[String, String]) {
  import KafkaParams._

  val bootstrapServers: String =
    user.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG).filter(_.trim.nonEmpty).getOrElse(
      throw StreamctlException(
        "Option 'kafka.bootstrap.servers' is required (e.g. .option(\"kafka.bootstrap.servers\", \"host:9092\"))"
      )
    )

  ManagedByStreamctl.foreach { k =>
    if (user.contains(k)) throw StreamctlException(
      s"Option 'kafka.$k' is not supported: streamctl manages it (offsets live in the query checkpoint, records are read as bytes)"
    )
  }

  checkWithKafka(user)

  /**
   * `isolation.level`: with `read_committed` a reader sees only committed transactions, so the
   * offsets it plans up to are the last stable ones (what such a consumer can read), not the
   * partitions' ends.
   */
  val isolationLevel: IsolationLevel =
    user.get(
      ConsumerConfig.ISOLATION_LEVEL_CONFIG
    ).map(_.trim.toUpperCase(java.util.Locale.ROOT)) match {
      case Some("READ_COMMITTED") => IsolationLevel.READ_COMMITTED
      case _ => IsolationLevel.READ_UNCOMMITTED
    }

  /**
   * The producer's `transaction.timeout.ms`: what it gives for this setting, else Kafka's default.
   */
  def transactionTimeoutMs: Long =
    millis(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, positive = true).getOrElse(
      ProducerConfig.configDef().defaultValues().get(
        ProducerConfig.TRANSACTION_TIMEOUT_CONFIG
      ).asInstanceOf[Number].longValue
    )

  /** How long a call to the broker may wait before it is reported as unreachable. */
  val apiTimeoutMs: Long = millis(
    CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG,
    positive = true
  ).getOrElse(DefaultApiTimeoutMs)

  /**
   * `request.timeout.ms` of the clients streamctl makes: the user's, else Kafka's default cut to
   * the API timeout, so that one request cannot outlast the call that waits for it.
   */
  private val requestTimeoutMs: Long =
    millis(
      CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG,
      positive = true
    ).getOrElse(math.min(apiTimeoutMs, MaxRequestTimeoutMs))

  /**
   * How long the producer may take to deliver a record, retries included. Kafka refuses a value
   * below `linger.ms + request.timeout.ms`, so a short API timeout is rounded up to that.
   */
  val deliveryTimeoutMs: Long =
    millis(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, positive = true).getOrElse {
      val linger =
        millis(ProducerConfig.LINGER_MS_CONFIG, positive = false).getOrElse(DefaultLingerMs)
      math.max(apiTimeoutMs, linger + requestTimeoutMs)
    }

  /**
   * These settings for readers of bounded ranges (micro-batches, batch reads): `fetch.max.wait.ms`
   * is [[BoundedReadFetchWaitMs]] unless the user set it. Such a reader asks only for offsets the
   * broker already has, which it answers at once, so the wait holds back only the fetch Kafka's
   * consumer sends on after each poll that returned records: at the end of a range at the head of a
   * partition it finds nothing and waits out the whole `fetch.max.wait.ms` (500 ms by default), and
   * until it is answered the consumer sends that broker no other fetch. Whoever reads with the
   * consumer next (the task's next batch, or another task borrowing it from the pool) would wait
   * for it first. Real-time readers, which wait at the head for new records, keep the user's
   * settings. Made once per copy: every batch's readers ask for it.
   *
   * {{{
   * val p = KafkaParams(Map("bootstrap.servers" -> "127.0.0.1:9092")).forBoundedReads
   * assert(p.consumer.get("fetch.max.wait.ms") == "10")
   * }}}
   */
  @transient lazy val forBoundedReads: KafkaParams =
    if (user.contains(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG)) this
    else copy(user =
      user.updated(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, BoundedReadFetchWaitMs.toString)
    )

  /** The wait of admin calls (planning on the driver) and of the consumer's own blocking calls. */
  def apiWait: BrokerWait = BrokerWait(bootstrapServers, apiTimeoutMs, ApiTimeoutOption)

  /** The wait of a record send (sink writes, control messages): until Kafka acknowledges it. */
  def deliveryWait: BrokerWait = BrokerWait(
    bootstrapServers,
    deliveryTimeoutMs,
    if (user.contains(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG))
      s"kafka.${ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG}"
    else ApiTimeoutOption
  )

  def admin: java.util.Map[String, Object] = toJava(
    user ++ Map(
      CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG -> apiTimeoutMs.toString,
      // The admin client refuses a request timeout over its API timeout, which is always set here
      // (a shorter one for a quick question, too: `KafkaSystemAdmin.missingAfterTimeout`).
      CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG -> math.min(
        requestTimeoutMs,
        apiTimeoutMs
      ).toString
    ),
    drop = ConsumerOnly ++ ProducerOnly
  )

  def consumer: java.util.Map[String, Object] = {
    val m = toJava(user, drop = ProducerOnly ++ AdminOnly)
    m.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, classOf[ByteArrayDeserializer])
    m.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, classOf[ByteArrayDeserializer])
    m.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false")
    // An offset that is gone must surface as an error (data loss), never as a silent jump.
    m.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none")
    m.putIfAbsent(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, apiTimeoutMs.toString)
    m
  }

  def producer: java.util.Map[String, Object] = {
    val m = toJava(user, drop = ConsumerOnly ++ AdminOnly)
    m.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, classOf[ByteArraySerializer])
    m.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, classOf[ByteArraySerializer])
    m.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, apiTimeoutMs.toString)
    m.putIfAbsent(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, requestTimeoutMs.toString)
    m.putIfAbsent(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, deliveryTimeoutMs.toString)
    m
  }

  /**
   * Creates a Kafka client, turning Kafka's "Failed to construct ..." (whose cause, e.g. "No
   * resolvable bootstrap urls", would otherwise only reach the log) into an error that carries the
   * cause and names the servers and any host that does not resolve.
   */
  def newClient[T](kind: String)(create: => T): T =
    try create
    catch {
      case e: KafkaException =>
        val causes = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).flatMap(c =>
          Option(c.getMessage)
        ).toSeq.distinct
        val hosts = unresolvedHosts
        val hint =
          if (hosts.nonEmpty)
            s"host ${hosts.map(h => s"'$h'").mkString(", ")} does not resolve; check option 'kafka.bootstrap.servers'"
          else "check option 'kafka.bootstrap.servers' and the other kafka.* options"
        throw StreamctlException(
          s"Cannot create a Kafka $kind for $bootstrapServers: ${causes.mkString(": ")} ($hint)",
          e
        )
    }

  /**
   * The error for a record send that failed: a timeout (the broker did not acknowledge within
   * [[deliveryWait]], or the producer could not learn where to send within `max.block.ms`, which
   * defaults to the same wait) names the wait and its option; anything else Kafka's cause.
   */
  def sendFailed(what: String, cause: Throwable): StreamctlException = cause match {
    case t: org.apache.kafka.common.errors.TimeoutException =>
      val wait =
        if (
          user.contains(ProducerConfig.MAX_BLOCK_MS_CONFIG) && !user.contains(
            ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG
          )
        )
          BrokerWait(
            bootstrapServers,
            user(ProducerConfig.MAX_BLOCK_MS_CONFIG).trim.toLong,
            s"kafka.${ProducerConfig.MAX_BLOCK_MS_CONFIG}"
          )
        else deliveryWait
      wait.exceeded(what, t)
    case t: java.util.concurrent.TimeoutException => deliveryWait.exceeded(what, t)
    case a: AuthenticationException => authenticationFailed(what, a)
    case c => StreamctlException(
        s"Kafka at $bootstrapServers failed while $what: ${c.getClass.getSimpleName}: ${c.getMessage}",
        c
      )
  }

  /**
   * The broker refused these credentials (or the TLS handshake): one line naming the servers and
   * the security protocol and SASL mechanism in use, so a wrong password reads as such and not as
   * an outage. Kafka's own message names no secret.
   */
  def authenticationFailed(what: String, cause: AuthenticationException): StreamctlException = {
    val protocol = user.getOrElse(
      CommonClientConfigs.SECURITY_PROTOCOL_CONFIG,
      CommonClientConfigs.DEFAULT_SECURITY_PROTOCOL
    )
    val sasl = protocol.toUpperCase(java.util.Locale.ROOT).startsWith("SASL")
    val how = if (sasl)
      s"security.protocol $protocol, SASL mechanism ${user.getOrElse(SaslConfigs.SASL_MECHANISM, SaslConfigs.DEFAULT_SASL_MECHANISM)}"
    else s"security.protocol $protocol"
    val check = if (sasl)
      "check the credentials in option 'kafka.sasl.jaas.config' and option 'kafka.sasl.mechanism'"
    else "check the kafka.ssl.* options"
    val reason = Option(
      cause.getMessage
    ).map(_.linesIterator.mkString(" ")).getOrElse(cause.getClass.getSimpleName)
    StreamctlException(
      s"Kafka at $bootstrapServers refused authentication ($how) while $what: $reason ($check)",
      cause
    )
  }

  /**
   * Identity of these settings, for caches of clients on executors; made once per copy, as every
   * reader and writer of every batch asks it (twice each: 8,192 times a batch at 4,096 tasks).
   */
  @transient lazy val cacheKey: String =
    user.toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString("\u0000")

  private def unresolvedHosts: Seq[String] =
    bootstrapServers.split(',').map(_.trim).filter(_.nonEmpty).toSeq.flatMap { address =>
      val host = Option(Try(Utils.getHost(address)).getOrElse(null)).getOrElse(address)
      try { InetAddress.getAllByName(host); None }
      catch { case _: UnknownHostException => Some(host) }
    }

  /** A duration streamctl itself reads; Kafka's parser has already checked it is a number. */
  private def millis(key: String, positive: Boolean): Option[Long] = user.get(key).map { v =>
    val ms = v.trim.toLong
    if (positive && ms <= 0) throw StreamctlException(
      s"Option 'kafka.$key' must be a positive number of milliseconds, not '$v'"
    )
    ms
  }
}

object KafkaParams {

  /**
   * How long a reader of bounded ranges lets the broker hold a fetch
   * ([[KafkaParams.forBoundedReads]]).
   */
  val BoundedReadFetchWaitMs = 10L

  /** Kafka's own default for `default.api.timeout.ms`. */
  val DefaultApiTimeoutMs = 60000L
  val ApiTimeoutOption = s"kafka.${CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG}"
  /* Kafka's default request timeout; a shorter API timeout shortens it too, or one request could
   * outlast the call. */
  private val MaxRequestTimeoutMs = 30000L
  private val DefaultLingerMs: Long =
    ProducerConfig.configDef().defaultValues().get(
      ProducerConfig.LINGER_MS_CONFIG
    ).asInstanceOf[Number].longValue

  /**
   * Settings streamctl sets itself on its clients (records are bytes, offsets are the query's),
   * which a user's options may not give.
   */
  val ManagedByStreamctl: Set[String] = Set(
    "key.deserializer",
    "value.deserializer",
    "key.serializer",
    "value.serializer",
    "enable.auto.commit",
    "auto.offset.reset"
  )

  // Settings that only one client kind knows; passing them to another only produces
  // "unknown config" warnings in every executor log.
  private val ConsumerOnly = Set(
    "group.id",
    "group.instance.id",
    "max.poll.records",
    "fetch.min.bytes",
    "fetch.max.bytes",
    "fetch.max.wait.ms",
    "max.partition.fetch.bytes",
    "isolation.level",
    "client.rack",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "check.crcs"
  )
  private val ProducerOnly = Set(
    "acks",
    "linger.ms",
    "batch.size",
    "compression.type",
    "buffer.memory",
    "max.block.ms",
    "retries",
    "enable.idempotence",
    "max.in.flight.requests.per.connection",
    "delivery.timeout.ms",
    "transactional.id",
    "transaction.timeout.ms",
    "partitioner.class",
    "max.request.size"
  )
  private val AdminOnly = Set.empty[String]

  /**
   * Runs every value the user gave through the parsers and validators of the Kafka clients that
   * know it, so a bad value fails when the options are parsed, with Kafka's own words and the
   * option's name, instead of deep inside a client on an executor. Settings no client knows are
   * left alone (plugins read their own), as Kafka does.
   */
  private def checkWithKafka(user: Map[String, String]): Unit = {
    val settings = user.asJava
    val refused = Seq(
      ConsumerConfig.configDef(),
      ProducerConfig.configDef(),
      AdminClientConfig.configDef()
    ).iterator
      .flatMap(_.validate(settings).asScala)
      .filter(v => user.contains(v.name) && !v.errorMessages.isEmpty)
      .map(v => v.name -> v.errorMessages.get(0))
      .toSeq.distinctBy(_._1).sortBy(_._1)
    if (refused.nonEmpty)
      throw StreamctlException(
        refused.map { case (k, msg) => s"Option 'kafka.$k': $msg" }.mkString("; ")
      )
  }

  private def toJava(m: Map[String, String], drop: Set[String]): java.util.Map[String, Object] = {
    val out = new java.util.HashMap[String, Object]()
    m.foreach { case (k, v) => if (!drop.contains(k)) out.put(k, v) }
    out
  }
}
