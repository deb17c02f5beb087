package streamctl.plan

import streamctl.StreamctlException
import streamctl.chooser.{ChooserConfig, ChooserFactory}
import streamctl.config.{OptionSet, OptionSpec}
import streamctl.control.ControlOptions
import streamctl.grouper.GrouperConfig
import streamctl.locality.LocalityStep
import streamctl.startpoint.{CustomStartpointResolver, StartpointResolver}
import streamctl.system.{BrokerWait, KafkaParams}

/**
 * The options of `spark.readStream.format("streamctl")`, checked once on the driver when the
 * query starts: every option is declared once, by the feature that reads it, and collected in
 * [[SourceOptions.Registry]]; this class reads them all, so a bad value or an unknown option
 * fails the query at its start, naming the option. Names follow Spark's Kafka source where one
 * exists (`kafka.*`, `fail.on.data.loss`).
 *
 * {{{
 * val o = SourceOptions(Map("kafka.bootstrap.servers" -> "h:9092", "streams" -> "orders,rates",
 *                           "stream.rates.bootstrap" -> "true", "max.records.per.batch" -> "10000"))
 * o.streams                 // Seq("orders", "rates")
 * o.chooser.bootstrapStreams // Set("rates")
 * }}}
 */
final case class SourceOptions(raw: Map[String, String]) {
  import SourceOptions._

  private val options = Registry.parse(raw)

  val kafka: KafkaParams = KafkaParams(options.withPrefix("kafka."))

  val streams: Seq[String] = {
    val s = options.get(Streams).getOrElse(Nil)
    if (s.isEmpty) throw StreamctlException(s"Option '${Streams.name}' is required: ${Streams.doc}")
    val dup = s.diff(s.distinct)
    if (dup.nonEmpty) throw StreamctlException(s"Option '${Streams.name}' names ${dup.distinct.mkString(", ")} more than once")
    s
  }
  options.checkStreamNames(streams)

  val maxRecordsPerBatch: Option[Long] = options.get(MaxRecordsPerBatch)
  val metadataStorePath: Option[String] = options.get(MetadataStorePath)
  val startingOffsets: String = options(StartingOffsets)
  val failOnDataLoss: Boolean = options(FailOnDataLoss)

  /**
   * How long a reader waits for records the broker should have: `poll.timeout.ms`, by default
   * the same wait as every other call to Kafka (`kafka.default.api.timeout.ms`).
   */
  val readWait: BrokerWait = options.get(PollTimeoutMs) match {
    case Some(ms) => BrokerWait(kafka.bootstrapServers, ms, PollTimeoutMs.name)
    case None => kafka.apiWait
  }

  val grouping: GrouperConfig = GrouperConfig(options, streams)
  val chooser: ChooserConfig = ChooserConfig(options, streams)
  // Built here so that a chooser class that cannot be loaded fails the query at its start.
  ChooserFactory.validate(chooser)
  val intermediateStreams: Set[String] = options.streams(ControlOptions.Intermediate, streams).collect { case (s, true) => s }.toSet
  val stopOnEndOfStream: Boolean = options(ControlOptions.StopOnEndOfStream)
  val hostAffinity: Boolean = options(LocalityStep.HostAffinity)
  val startpointResolvers: Seq[CustomStartpointResolver] = StartpointResolver.customResolvers(options)
}

object SourceOptions {
  val Streams: OptionSpec[Seq[String]] = OptionSpec.list("streams", "a comma-separated list of Kafka topics to read")
  val MaxRecordsPerBatch: OptionSpec[Long] = OptionSpec.positiveLong("max.records.per.batch",
    "per-batch record budget, shared between partitions by the chooser")
  val MetadataStorePath: OptionSpec[String] = OptionSpec.string("metadata.store.path",
    "where startpoints, task mapping and locality are kept (default <checkpoint>/streamctl)")
  val StartingOffsets: OptionSpec[String] = OptionSpec.oneOf("starting.offsets", "starting offsets", Seq("earliest", "latest"),
    "where a query's first run starts", default = Some("latest"))
  val FailOnDataLoss: OptionSpec[Boolean] = OptionSpec.bool("fail.on.data.loss",
    "fail when records the query has not read are gone from the broker", default = true)
  val PollTimeoutMs: OptionSpec[Long] = OptionSpec.positiveLong("poll.timeout.ms",
    "how long a reader waits for records the broker should have (default kafka.default.api.timeout.ms)")

  /** Every option of the source, from every feature. */
  val Registry: OptionSet = new OptionSet("format(\"streamctl\")",
    Seq(Streams, MaxRecordsPerBatch, MetadataStorePath, StartingOffsets, FailOnDataLoss, PollTimeoutMs,
      ControlOptions.StopOnEndOfStream, LocalityStep.HostAffinity, StartpointResolver.Resolvers) ++
      GrouperConfig.Registry.specs ++ ChooserConfig.Registry.specs,
    Seq(ControlOptions.Intermediate) ++ GrouperConfig.Registry.streamProperties ++ ChooserConfig.Registry.streamProperties,
    GrouperConfig.Registry.userClasses ++ ChooserConfig.Registry.userClasses,
    passThrough = Seq("kafka."))
}
