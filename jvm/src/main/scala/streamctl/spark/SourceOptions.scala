package streamctl.spark

import java.util.Locale

import streamctl.StreamctlException
import streamctl.system.{BrokerWait, KafkaParams}

/**
 * The source's options, validated once on the driver. Names follow Spark's Kafka source
 * where one exists (`kafka.*`, `fail.on.data.loss`); an unknown option is an error that
 * lists the known ones, because a typo in a streaming option otherwise goes unnoticed
 * until production.
 *
 * `raw` keeps the user's original spelling: stream names inside `stream.<name>.*` are
 * case-sensitive, like Kafka topics.
 */
final case class SourceOptions(raw: Map[String, String]) {
  import SourceOptions._

  val kafka: KafkaParams = KafkaParams.fromOptions(raw)

  val streams: Seq[String] = {
    val s = get(Streams).map(_.split(',').map(_.trim).filter(_.nonEmpty).toSeq).getOrElse(Nil)
    if (s.isEmpty) throw StreamctlException(s"Option '$Streams' is required: a comma-separated list of Kafka topics to read")
    val dup = s.diff(s.distinct)
    if (dup.nonEmpty) throw StreamctlException(s"Option '$Streams' names ${dup.distinct.mkString(", ")} more than once")
    s
  }

  val maxRecordsPerBatch: Option[Long] = get(MaxRecordsPerBatch).map(v => positiveLong(MaxRecordsPerBatch, v))

  val jobName: Option[String] = get(JobName)

  val metadataStorePath: Option[String] = get(MetadataStorePath)

  val startingOffsets: String = get(StartingOffsets).map(_.toLowerCase(Locale.ROOT)).getOrElse("latest") match {
    case v @ ("earliest" | "latest") => v
    case other => throw StreamctlException(s"Option '$StartingOffsets' must be 'earliest' or 'latest', not '$other'")
  }

  val failOnDataLoss: Boolean = bool(FailOnDataLoss, default = true)

  /**
   * How long a reader waits for records the broker should have: `poll.timeout.ms`, by default
   * the same wait as every other call to Kafka (`kafka.default.api.timeout.ms`).
   */
  val readWait: BrokerWait = get(PollTimeoutMs).map(v => positiveLong(PollTimeoutMs, v)) match {
    case Some(ms) => BrokerWait(kafka.bootstrapServers, ms, PollTimeoutMs)
    case None => kafka.apiWait
  }

  /** Per-stream properties: `stream.<name>.<property>`, with the stream name as the user spelled it. */
  val streamProperties: Map[String, Map[String, String]] = raw.toSeq.collect {
    case (k, v) if k.toLowerCase(Locale.ROOT).startsWith("stream.") =>
      val rest = k.substring("stream.".length)
      val dot = rest.lastIndexOf('.')
      if (dot <= 0) throw StreamctlException(s"Option '$k' must look like 'stream.<name>.<property>'")
      val (name, prop) = (rest.substring(0, dot), rest.substring(dot + 1).toLowerCase(Locale.ROOT))
      if (!streams.contains(name))
        throw StreamctlException(s"Option '$k' names stream '$name', which is not in '$Streams' (${streams.mkString(", ")})")
      if (!StreamPropertyNames.contains(prop))
        throw StreamctlException(s"Option '$k': unknown stream property '$prop' (known: ${StreamPropertyNames.toSeq.sorted.mkString(", ")})")
      (name, prop, v)
  }.groupBy(_._1).map { case (name, props) => name -> props.map(p => p._2 -> p._3).toMap }

  def streamFlag(stream: String, property: String): Boolean =
    streamProperties.get(stream).flatMap(_.get(property)).exists(v => parseBool(s"stream.$stream.$property", v))

  val intermediateStreams: Set[String] = streams.filter(streamFlag(_, "intermediate")).toSet

  raw.keys.foreach { k =>
    val lk = k.toLowerCase(Locale.ROOT)
    if (!Known.contains(lk) && !KnownPrefixes.exists(lk.startsWith))
      throw StreamctlException(s"Unknown option '$k' for format(\"streamctl\"). Known options: " +
        s"${(Known ++ KnownPrefixes.map(_ + "*")).toSeq.sorted.mkString(", ")}")
  }

  // Options for a user's class are only read by that class: without it they would do nothing, silently.
  raw.keys.foreach { k =>
    val lk = k.toLowerCase(Locale.ROOT)
    UserClassOptions.find { case (prefix, _) => lk.startsWith(prefix) }.foreach { case (_, owner) =>
      if (get(owner).isEmpty)
        throw StreamctlException(s"Option '$k' is for the class named by option '$owner', and '$owner' is not set")
    }
  }

  val grouping: GroupingOptions = GroupingOptions(this)

  def get(name: String): Option[String] = lower.get(name)

  private lazy val lower: Map[String, String] = raw.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }

  private def bool(name: String, default: Boolean): Boolean = get(name).map(parseBool(name, _)).getOrElse(default)
}

object SourceOptions {
  val Streams = "streams"
  val MaxRecordsPerBatch = "max.records.per.batch"
  val JobName = "job.name"
  val MetadataStorePath = "metadata.store.path"
  val StartingOffsets = "starting.offsets"
  val FailOnDataLoss = "fail.on.data.loss"
  val PollTimeoutMs = "poll.timeout.ms"

  /** Option names owned by other parts (chooser, grouper, control, locality) are registered here too. */
  val Known: Set[String] = Set(Streams, MaxRecordsPerBatch, JobName, MetadataStorePath, StartingOffsets,
    FailOnDataLoss, PollTimeoutMs,
    "chooser", "chooser.class", "chooser.batch.size",
    "grouper", "grouper.class", "partition.expansion.algorithm", "partition.check.interval",
    "host.affinity", "stop.on.end.of.stream")
  /** Options passed through to a user's class (its constructor gets the query's options), by the option naming the class. */
  val UserClassOptions: Map[String, String] = Map("chooser.option." -> "chooser.class", "grouper.option." -> "grouper.class")
  val KnownPrefixes: Set[String] = Set("kafka.", "stream.") ++ UserClassOptions.keySet
  val StreamPropertyNames: Set[String] = Set("intermediate", "priority", "bootstrap", "broadcast")

  def parseBool(name: String, v: String): Boolean = v.trim.toLowerCase(Locale.ROOT) match {
    case "true" => true
    case "false" => false
    case other => throw StreamctlException(s"Option '$name' must be true or false, not '$other'")
  }

  def positiveLong(name: String, v: String): Long =
    v.trim.toLongOption.filter(_ > 0).getOrElse(
      throw StreamctlException(s"Option '$name' must be a positive integer, not '$v'"))
}
