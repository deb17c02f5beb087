package streamctl
package planner

import streamctl.StreamctlException
import streamctl.chooser.{ChooserConfig, ChooserFactory}
import streamctl.config.{OptionSet, OptionSpec, Parsers}
import streamctl.control.ControlOptions
import streamctl.grouper.GrouperConfig
import streamctl.locality.HostAffinity
import streamctl.startpoint.{CustomStartpointResolver, StartpointResolver}
import streamctl.system.{BrokerWait, KafkaParams, Subscription}

/**
 * The options of `spark.readStream.format("streamctl")` and `spark.read.format("streamctl")`,
 * checked once on the driver when the query starts: every option is declared once, by the feature
 * that reads it, and collected in [[SourceOptions.Registry]]; this class reads them all, so a bad
 * value or an unknown option fails the query at its start, naming the option. Spark's Kafka source
 * options keep Spark's names and meanings (`subscribe`, `startingOffsets`, `maxOffsetsPerTrigger`,
 * ...); streamctl's older names are aliases, and the Spark options streamctl cannot honour are
 * refused saying why ([[SourceOptions.Refused]]).
 *
 * {{{
 * val o = SourceOptions(Map("kafka.bootstrap.servers" -> "h:9092", "subscribe" -> "orders,rates",
 *                           "stream.rates.bootstrap" -> "true", "maxOffsetsPerTrigger" -> "10000"))
 * o.streams                 // Seq("orders", "rates")
 * o.chooser.bootstrapStreams // Set("rates")
 * }}}
 */
final case class SourceOptions(raw: Map[String, String]) {
  import SourceOptions._

  private val options = Registry.parse(raw)

  /**
   * The Kafka client settings. A source reading an intermediate stream reads `read_committed`
   * unless `kafka.isolation.level` says otherwise: its writer may be transactional
   * (docs/exactly-once.md), and for a writer that is not, both levels read the same records.
   */
  val kafka: KafkaParams = {
    val settings = options.withPrefix("kafka.")
    val isolation = org.apache.kafka.clients.consumer.ConsumerConfig.ISOLATION_LEVEL_CONFIG
    if (
      !options.anyStreams(ControlOptions.Intermediate).values.exists(identity) || settings.contains(
        isolation
      )
    ) KafkaParams(settings)
    else KafkaParams(settings + (isolation -> "read_committed"))
  }

  val subscription: Subscription = {
    val named = Seq(
      options.get(Subscribe).map(Subscription.Topics),
      options.get(SubscribePattern).map(Subscription.parsePattern(
        options.nameOf(SubscribePattern),
        _
      )),
      options.get(Assign).map(Subscription.parseAssign(options.nameOf(Assign), _))
    ).flatten
    named match {
      case Seq(Subscription.Topics(s)) =>
        if (s.isEmpty)
          throw StreamctlException(s"Option '${options.nameOf(Subscribe)}' names no topic")
        // A topic named twice is read once, as Spark's source reads its topics as a set.
        Subscription.Topics(s.distinct)
      case Seq(one) => one
      case Nil => throw StreamctlException(
          s"One of the options '${options.nameOf(Subscribe)}' (a comma-separated list of topics; " +
            s"streamctl's older name 'streams' means the same), '${options.nameOf(SubscribePattern)}' or '${options.nameOf(Assign)}' is required"
        )
      case _ => throw StreamctlException(
          s"Only one of the options '${options.nameOf(Subscribe)}', '${options.nameOf(SubscribePattern)}' and " +
            s"'${options.nameOf(Assign)}' may be given"
        )
    }
  }

  /**
   * The streams the options name: those of `subscribe` or `assign`; for a pattern, those that
   * `stream.<name>.*` options name (each must match it). Per-stream options are checked against
   * them.
   */
  val streams: Seq[String] = subscription match {
    case m @ Subscription.Matching(pattern) =>
      val named = options.streamNames
      named.find(!m.reads(_)).foreach(s =>
        throw StreamctlException(
          s"Option 'stream.$s.*' names stream '$s', which does not match option '${options.nameOf(SubscribePattern)}' ($pattern)"
        )
      )
      named
    case s => s.named
  }
  options.checkStreamNames(streams)

  val maxRecordsPerBatch: Option[Long] = options.get(MaxOffsetsPerTrigger)
  val minRecordsPerBatch: Option[Long] = options.get(MinOffsetsPerTrigger)
  val maxTriggerDelayMs: Long = options(MaxTriggerDelay)
  for (min <- minRecordsPerBatch; max <- maxRecordsPerBatch if min > max)
    throw StreamctlException(
      s"Option '${options.nameOf(MinOffsetsPerTrigger)}' ($min) is higher than option " +
        s"'${options.nameOf(MaxOffsetsPerTrigger)}' ($max): a batch would wait for more records than it may read"
    )

  /**
   * Real-time mode reads open-ended: a record budget per batch cannot apply, and ignoring it
   * silently would read more (or less) than the user asked per checkpoint interval.
   */
  def checkRealTime(): Unit =
    Seq(MaxOffsetsPerTrigger, MinOffsetsPerTrigger, MaxTriggerDelay).find(s =>
      options.isSet(s)
    ).foreach { s =>
      throw StreamctlException(
        s"Option '${options.nameOf(s)}' cannot apply in real-time mode (trigger(realTime=...)): " +
          "its tasks read continuously until the batch duration ends; remove the option"
      )
    }
  val metadataStorePath: Option[String] = options.get(MetadataStorePath)

  /**
   * `commitOffsets=true`: the consumer group (`kafka.group.id`) a streaming query commits its
   * positions to after each batch, for the monitoring tools that read group offsets
   * ([[streamctl.system.GroupOffsetCommitter]]). Never read back: the checkpoint is where a query
   * resumes.
   */
  val commitOffsetsTo: Option[String] = Option.when(options(CommitOffsets)) {
    kafka.user.getOrElse(
      org.apache.kafka.clients.consumer.ConsumerConfig.GROUP_ID_CONFIG,
      throw StreamctlException(
        s"Option '${options.nameOf(CommitOffsets)}' commits the query's positions to the consumer group of option " +
          "'kafka.group.id', which is not set: set it to the group your monitoring (kafka-consumer-groups, Burrow, " +
          "lag exporters) should show"
      )
    )
  }
  val failOnDataLoss: Boolean = options(FailOnDataLoss)
  val includeHeaders: Boolean = options(IncludeHeaders)
  val noTimestampMatchIsLatest: Boolean = options(StartingOffsetsByTimestampStrategy) == "latest"

  /** Where a query's first run (streaming) or a read (batch) starts; precedence as in Spark. */
  def starting(batch: Boolean): OffsetBound =
    bound(
      StartingTimestamp,
      StartingOffsetsByTimestamp,
      StartingOffsets,
      allowEarliest = true,
      latest = !batch
    )

  /** Where a batch read ends (latest by default); precedence as in Spark. */
  def ending: OffsetBound =
    bound(
      EndingTimestamp,
      EndingOffsetsByTimestamp,
      EndingOffsets,
      allowEarliest = false,
      latest = true
    )

  // Spark's precedence for either end: one timestamp for all, then per-partition timestamps, then
  // offsets; `latest` is both whether the offsets may say latest and the default when none is set.
  private def bound(
      timestamp: OptionSpec[Long],
      byTimestamp: OptionSpec[String],
      offsets: OptionSpec[String],
      allowEarliest: Boolean,
      latest: Boolean
  ): OffsetBound =
    options.get(timestamp).map(ts =>
      OffsetBound.Timestamps(options.nameOf(timestamp), Map.empty, Some(ts))
    )
      .orElse(options.get(byTimestamp).map(OffsetBound.parseTimestamps(
        options.nameOf(byTimestamp),
        _
      )))
      .orElse(options.get(offsets).map(OffsetBound.parseOffsets(
        options.nameOf(offsets),
        _,
        allowEarliest = allowEarliest,
        allowLatest = latest
      )))
      .getOrElse(OffsetBound.Named(offsets.name, latest = latest))

  // Resolved now, so that a malformed value fails the query at its start whichever kind it is.
  starting(batch = false)
  ending

  /**
   * A streaming query cannot end: the `endingOffsets*` options are for batch reads, as in Spark.
   */
  def checkStreaming(): Unit =
    Seq(EndingOffsets, EndingOffsetsByTimestamp, EndingTimestamp).find(s =>
      options.isSet(s)
    ).foreach { s =>
      throw StreamctlException(s"Option '${options.nameOf(s)}' is for batch reads (spark.read); a streaming query has no end " +
        "(use Trigger.AvailableNow to read what is there now and stop)")
    }

  /** Options that only a streaming query can act on, refused in a batch read (`spark.read`). */
  def checkBatch(): Unit =
    if (options.isSet(CommitOffsets)) throw StreamctlException(
      s"Option '${options.nameOf(CommitOffsets)}' is for " +
        "streaming queries, which commit their positions after each batch; a batch read (spark.read) has none to commit"
    )

  /**
   * How long a reader waits for records the broker should have: `kafkaConsumer.pollTimeoutMs`, by
   * default the same wait as every other call to Kafka (`kafka.default.api.timeout.ms`).
   */
  val readWait: BrokerWait = options.get(PollTimeoutMs) match {
    case Some(ms) => BrokerWait(kafka.bootstrapServers, ms, options.nameOf(PollTimeoutMs))
    case None => kafka.apiWait
  }

  val grouping: GrouperConfig = GrouperConfig(options, streams)
  val chooser: ChooserConfig = ChooserConfig(options, streams)
  // Built here so that a chooser class that cannot be loaded fails the query at its start.
  ChooserFactory.validate(chooser)
  val intermediateStreams: Set[String] =
    options.streams(ControlOptions.Intermediate, streams).collect { case (s, true) => s }.toSet
  /* Control bookkeeping is one state per intermediate SSP, merged over the tasks that read it,
   * while every task reads a broadcast SSP from a position of its own: a task behind the others
   * would take their end-of-stream for its own (ending early, or failing on its next record) and
   * their watermark too. */
  (intermediateStreams & grouping.broadcastStreams).toSeq.sorted.headOption.foreach { s =>
    throw StreamctlException(
      s"Stream '$s' is both intermediate (option 'stream.$s.intermediate') and broadcast (option " +
        s"'stream.$s.broadcast'): streamctl keeps one end-of-stream and watermark state per partition of an " +
        "intermediate stream, which tasks reading it each from their own position cannot share. Read it " +
        "without broadcast"
    )
  }
  val stopOnEndOfStream: Boolean = options(ControlOptions.StopOnEndOfStream)
  val hostAffinity: Boolean = options(HostAffinity.Enabled)
  val startpointResolvers: Seq[CustomStartpointResolver] =
    StartpointResolver.customResolvers(options)

  /** How the source names itself in query progress: its topics, or its pattern. */
  def describe: String = subscription match {
    case Subscription.Matching(pattern) => pattern
    case s => s.named.mkString(",")
  }
}

object SourceOptions {
  val Subscribe: OptionSpec[Seq[String]] =
    OptionSpec.list("subscribe", "a comma-separated list of Kafka topics to read")
      .alias("streams")
  val SubscribePattern: OptionSpec[String] = OptionSpec.string(
    "subscribePattern",
    "a Java regex: every topic whose name matches, also topics created while the query runs"
  )
  val Assign: OptionSpec[String] =
    OptionSpec.string("assign", """given partitions, JSON such as {"topicA":[0,1]}""")
  val MaxOffsetsPerTrigger: OptionSpec[Long] = OptionSpec.positiveLong(
    "maxOffsetsPerTrigger",
    "per-batch budget of offsets (control messages count, as in Spark), shared between partitions by the chooser"
  )
    .alias("max.records.per.batch")
  val MinOffsetsPerTrigger: OptionSpec[Long] = OptionSpec.positiveLong(
    "minOffsetsPerTrigger",
    "a batch waits until this many records are there, or maxTriggerDelay passed"
  )
  val MaxTriggerDelay: OptionSpec[Long] = OptionSpec.sparkDuration(
    "maxTriggerDelay",
    "the longest a batch waits for minOffsetsPerTrigger records",
    default = Some(15 * 60 * 1000L)
  )
  val MetadataStorePath: OptionSpec[String] = OptionSpec.string(
    "metadata.store.path",
    "where startpoints, task mapping and locality are kept (default <checkpoint>/streamctl)"
  )
  val StartingOffsets: OptionSpec[String] = OptionSpec.string(
    "startingOffsets",
    "where a query's first run starts: earliest, latest or per-partition JSON"
  ).alias("starting.offsets")
  val StartingOffsetsByTimestamp: OptionSpec[String] = OptionSpec.string(
    "startingOffsetsByTimestamp",
    "a query's first run starts at these per-partition timestamps (JSON)"
  )
  val StartingTimestamp: OptionSpec[Long] = OptionSpec(
    "startingTimestamp",
    Parsers.nonNegativeLong,
    "a query's first run starts at this timestamp (epoch ms) in every partition"
  )
  val StartingOffsetsByTimestampStrategy: OptionSpec[String] = OptionSpec.oneOf(
    "startingOffsetsByTimestampStrategy",
    "strategy",
    Seq("error", "latest"),
    "a partition without a record at or after the starting timestamp: fail, or start at its end",
    default = Some("error")
  )
  val EndingOffsets: OptionSpec[String] =
    OptionSpec.string("endingOffsets", "where a batch read ends: latest or per-partition JSON")
  val EndingOffsetsByTimestamp: OptionSpec[String] = OptionSpec.string(
    "endingOffsetsByTimestamp",
    "a batch read ends at these per-partition timestamps (JSON)"
  )
  val EndingTimestamp: OptionSpec[Long] = OptionSpec(
    "endingTimestamp",
    Parsers.nonNegativeLong,
    "a batch read ends at this timestamp (epoch ms) in every partition"
  )
  val FailOnDataLoss: OptionSpec[Boolean] = OptionSpec.bool(
    "failOnDataLoss",
    "fail when records the query has not read are gone from the broker",
    default = true
  ).alias("fail.on.data.loss")
  val CommitOffsets: OptionSpec[Boolean] = OptionSpec.bool(
    "commitOffsets",
    "after each batch, commit the query's positions to consumer group 'kafka.group.id', for monitoring only",
    default = false
  )
  val IncludeHeaders: OptionSpec[Boolean] = OptionSpec.bool(
    "includeHeaders",
    "add the records' headers as column 'headers'",
    default = false
  )
  val PollTimeoutMs: OptionSpec[Long] = OptionSpec.positiveLong(
    "kafkaConsumer.pollTimeoutMs",
    "how long a reader waits for records the broker should have (default kafka.default.api.timeout.ms)"
  ).alias("poll.timeout.ms")
  // Spark retries its offset requests itself; streamctl's admin requests wait (and Kafka's client
  // retries them) up to kafka.default.api.timeout.ms. Accepted so that Spark jobs run unchanged.
  val FetchOffsetNumRetries: OptionSpec[Int] = OptionSpec(
    "fetchOffset.numRetries",
    Parsers.int,
    "accepted for Spark compatibility; offset requests wait up to kafka.default.api.timeout.ms instead"
  )
  val FetchOffsetRetryIntervalMs: OptionSpec[Long] = OptionSpec(
    "fetchOffset.retryIntervalMs",
    Parsers.nonNegativeLong,
    "accepted for Spark compatibility; offset requests wait up to kafka.default.api.timeout.ms instead"
  )

  /** Spark Kafka source options streamctl refuses: why, and what to use instead. */
  val Refused: Map[String, String] = Map(
    "minPartitions" -> ("streamctl reads each Kafka partition in exactly one task (one Spark input partition), so " +
      "records keep their partition order for choosers and control messages; it never splits a partition. " +
      "For more parallel readers, give the topic more partitions"),
    "maxRecordsPerPartition" -> ("streamctl reads each Kafka partition in exactly one task and never splits it; " +
      "bound a batch with 'maxOffsetsPerTrigger' instead"),
    "groupIdPrefix" -> ("streamctl joins no consumer group (it assigns partitions itself and keeps offsets in the " +
      "checkpoint), so there is no generated group id to prefix; set 'kafka.group.id' if your brokers authorize reads by group")
  )

  /** Every option of the source, from every feature. */
  val Registry: OptionSet = new OptionSet(
    "format(\"streamctl\")",
    Seq(
      Subscribe,
      SubscribePattern,
      Assign,
      CommitOffsets,
      MaxOffsetsPerTrigger,
      MinOffsetsPerTrigger,
      MaxTriggerDelay,
      MetadataStorePath,
      StartingOffsets,
      StartingOffsetsByTimestamp,
      StartingTimestamp,
      StartingOffsetsByTimestampStrategy,
      EndingOffsets,
      EndingOffsetsByTimestamp,
      EndingTimestamp,
      FailOnDataLoss,
      IncludeHeaders,
      PollTimeoutMs,
      FetchOffsetNumRetries,
      FetchOffsetRetryIntervalMs,
      ControlOptions.StopOnEndOfStream,
      HostAffinity.Enabled,
      StartpointResolver.Resolvers
    ) ++
      GrouperConfig.Registry.specs ++ ChooserConfig.Registry.specs,
    Seq(
      ControlOptions.Intermediate
    ) ++ GrouperConfig.Registry.streamProperties ++ ChooserConfig.Registry.streamProperties,
    GrouperConfig.Registry.userClasses ++ ChooserConfig.Registry.userClasses,
    passThrough = Seq("kafka."),
    ignored = Set("path"),
    refused = Refused
  )
}
