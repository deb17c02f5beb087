package streamctl.system

import java.util.Locale

import org.apache.kafka.clients.CommonClientConfigs
import org.apache.kafka.clients.consumer.ConsumerConfig
import org.apache.kafka.clients.producer.ProducerConfig
import org.apache.kafka.common.serialization.{ByteArrayDeserializer, ByteArraySerializer}

import streamctl.StreamctlException

/**
 * Client settings derived from the user's `kafka.*` options (prefix stripped).
 * streamctl owns offsets and (de)serialization, so the settings that would fight it are
 * refused with an error naming the option rather than silently overridden.
 *
 * {{{
 * val p = KafkaParams(Map("bootstrap.servers" -> "127.0.0.1:9092"))
 * new KafkaConsumer[Array[Byte], Array[Byte]](p.consumer)
 * }}}
 */
final case class KafkaParams(user: Map[String, String]) {
  import KafkaParams._

  val bootstrapServers: String = user.getOrElse(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
    throw StreamctlException("Option 'kafka.bootstrap.servers' is required (e.g. .option(\"kafka.bootstrap.servers\", \"host:9092\"))"))

  ManagedByStreamctl.foreach { k =>
    if (user.contains(k)) throw StreamctlException(
      s"Option 'kafka.$k' is not supported: streamctl manages it (offsets live in the query checkpoint, records are read as bytes)")
  }

  /** How long a call to the broker may wait before it is reported as unreachable. */
  val apiTimeoutMs: Long = user.get(CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG).map(_.toLong).getOrElse(DefaultApiTimeoutMs)

  def admin: java.util.Map[String, Object] = toJava(user ++ Map(
    CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG -> apiTimeoutMs.toString,
    CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG -> math.min(apiTimeoutMs, 30000L).toString),
    drop = ConsumerOnly ++ ProducerOnly)

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
    m
  }

  /** Identity of these settings, for caches of clients on executors. */
  def cacheKey: String = user.toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString("\u0000")
}

object KafkaParams {
  val DefaultApiTimeoutMs = 30000L

  private val ManagedByStreamctl = Set("key.deserializer", "value.deserializer", "key.serializer",
    "value.serializer", "enable.auto.commit", "auto.offset.reset")

  // Settings that only one client kind knows; passing them to another only produces
  // "unknown config" warnings in every executor log.
  private val ConsumerOnly = Set("group.id", "group.instance.id", "max.poll.records", "fetch.min.bytes",
    "fetch.max.bytes", "fetch.max.wait.ms", "max.partition.fetch.bytes", "isolation.level", "client.rack",
    "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "check.crcs")
  private val ProducerOnly = Set("acks", "linger.ms", "batch.size", "compression.type", "buffer.memory",
    "max.block.ms", "retries", "enable.idempotence", "max.in.flight.requests.per.connection",
    "delivery.timeout.ms", "transactional.id", "partitioner.class", "max.request.size")
  private val AdminOnly = Set.empty[String]

  /** Extracts `kafka.*` options (case-sensitive map) with the prefix removed. */
  def fromOptions(options: Map[String, String]): KafkaParams =
    KafkaParams(options.collect {
      case (k, v) if k.toLowerCase(Locale.ROOT).startsWith("kafka.") => k.substring("kafka.".length) -> v
    })

  private def toJava(m: Map[String, String], drop: Set[String]): java.util.Map[String, Object] = {
    val out = new java.util.HashMap[String, Object]()
    m.foreach { case (k, v) => if (!drop.contains(k)) out.put(k, v) }
    out
  }
}
