package streamctl.control

import streamctl.StreamctlException
import streamctl.config.{OptionSet, OptionSpec}
import streamctl.system.KafkaParams

/**
 * The options of `writeStream.format("streamctl")` and `write.format("streamctl")`, checked when
 * Spark builds the write: Spark's Kafka sink options (`topic`, `kafka.*`) with Spark's meanings,
 * and streamctl's `intermediate=true`, which writes the intermediate format (a framing byte per
 * value, control messages in the same partitions) with the producer settings of [[ControlOptions]].
 * Without it the sink writes plain records, as `format("kafka")` does.
 *
 * {{{
 * val plain = SinkOptions(Map("kafka.bootstrap.servers" -> "h:9092", "topic" -> "out"))
 * plain.intermediate // false
 * val o = SinkOptions(Map("kafka.bootstrap.servers" -> "h:9092", "topic" -> "mid", "intermediate" -> "true",
 *                         "producer.count" -> "2", "producer.name" -> "left"))
 * o.producerCount // 2
 * }}}
 */
final case class SinkOptions(raw: Map[String, String]) {
  import ControlOptions.{
    EndOfStreamAfterAvailableNow,
    ProducerCount,
    ProducerIdleTimeout,
    ProducerName,
    WatermarkInterval
  }
  import SinkOptions._

  private val options = SinkOptions.Registry.parse(raw)

  val kafka: KafkaParams = KafkaParams(options.withPrefix("kafka."))

  /** The topic every row goes to; without it, each row's `topic` column says (as in Spark). */
  val topic: Option[String] = options.get(Topic)
  val intermediate: Boolean = options(Intermediate)

  /** Option `topic` as the user wrote it (`stream` is an alias), for errors about the topic. */
  val topicOption: String = options.nameOf(Topic)

  if (!intermediate) ControlSpecs.find(options.isSet).foreach { s =>
    throw StreamctlException(
      s"Option '${options.nameOf(s)}' is about the control messages of an intermediate stream; " +
        s"""set option '${Intermediate.name}' to 'true' to write one (without it the sink writes plain records, as format("kafka") does)"""
    )
  }
  if (intermediate && topic.isEmpty) throw StreamctlException(
    s"A sink with '${options.nameOf(Intermediate)}=true' writes one intermediate stream, named by option '$topicOption', which is not set"
  )

  /** The intermediate stream written (only with `intermediate=true`). */
  def stream: String =
    topic.getOrElse(throw StreamctlException(s"Option '$topicOption' is required"))
  val producerName: Option[String] = options.get(ProducerName)
  val producerCount: Int = options(ProducerCount)
  if (producerCount > 1 && producerName.isEmpty)
    throw StreamctlException(
      s"Option '${options.nameOf(ProducerCount)}' is $producerCount: give each of the $producerCount writing " +
        s"queries its own '${options.nameOf(ProducerName)}', so readers of stream '$stream' can tell them apart"
    )
  val endOfStreamAfterAvailableNow: Boolean = options(EndOfStreamAfterAvailableNow)
  val idleTimeoutMs: Option[Long] = options(ProducerIdleTimeout)

  /** Option `transactional` as the user set it; unset, see [[transactional]]. */
  val transactionalSet: Option[Boolean] = options.get(Transactional)

  /**
   * Whether each writer partition's records of a batch go out in one Kafka transaction
   * ([[streamctl.system.TransactionalProducers]]): as option `transactional` says, or else for
   * every write of an intermediate stream that can be one, which is every write but a real-time
   * query's (whose batch lasts as long as it runs). Intermediate streams are read `read_committed`,
   * so a pipeline of queries is exactly once unless a hop asks otherwise; a plain sink stays
   * at-least-once, as `format("kafka")`.
   */
  def transactional(realTime: Boolean): Boolean =
    transactionalSet.getOrElse(intermediate && !realTime)

  val transactionalIdPrefix: String = options(TransactionalIdPrefix)
  // Outside real-time mode a sink is transactional whenever it can be one at all.
  if (options.isSet(TransactionalIdPrefix) && !transactional(realTime = false))
    throw StreamctlException(
      s"Option '${options.nameOf(TransactionalIdPrefix)}' names the transactional ids of a transactional sink; " +
        s"set option '${options.nameOf(Transactional)}' to 'true' to write one"
    )
  // One producer writes under one transactional id: streamctl gives each writer partition its own.
  if (raw.keySet.exists(_.equalsIgnoreCase("kafka.transactional.id"))) throw StreamctlException(
    s"Option 'kafka.transactional.id' is not supported: with '${options.nameOf(Transactional)}=true' streamctl gives " +
      s"each writer partition its own transactional id, named by option '${options.nameOf(TransactionalIdPrefix)}'"
  )
  val watermarkIntervalMs: Long = options(WatermarkInterval)
}

object SinkOptions {
  val Topic: OptionSpec[String] = OptionSpec.string(
    "topic",
    "the Kafka topic every row is written to; overrides a 'topic' column"
  ).alias("stream")
  val Intermediate: OptionSpec[Boolean] = OptionSpec.bool(
    "intermediate",
    "write streamctl's intermediate format (framed values, control messages) instead of plain records",
    default = false
  )
  /* Spark's sink accepts it (and writes a 'headers' column whenever there is one); so does
   * streamctl. */
  val IncludeHeaders: OptionSpec[Boolean] = OptionSpec.bool(
    "includeHeaders",
    "accepted as Spark's sink does: a 'headers' column is written whenever there is one",
    default = false
  )

  val Transactional: OptionSpec[Boolean] = OptionSpec.bool(
    "transactional",
    "write each batch's records of a writer partition in one Kafka transaction: exactly once for read_committed readers " +
      "(default: true for intermediate=true except in real-time mode, else false)",
    default = false
  )
  val TransactionalIdPrefix: OptionSpec[String] = OptionSpec.string(
    "transactionalIdPrefix",
    "the start of the sink's transactional ids and marker consumer groups (for ACLs granted by prefix)"
  )
    .copy(default = Some("streamctl"))

  private val ControlSpecs = Seq(
    ControlOptions.ProducerName,
    ControlOptions.ProducerCount,
    ControlOptions.EndOfStreamAfterAvailableNow,
    ControlOptions.ProducerIdleTimeout,
    ControlOptions.WatermarkInterval
  )

  val Registry: OptionSet = new OptionSet(
    "writeStream.format(\"streamctl\")",
    Seq(Topic, Intermediate, IncludeHeaders, Transactional, TransactionalIdPrefix) ++ ControlSpecs,
    passThrough = Seq("kafka."),
    // Spark adds the first three itself for every sink; the others are Spark's own writer options
    // (asynchronous progress tracking, which real-time queries of Spark 4.3 must turn off).
    ignored = Set(
      "path",
      "checkpointlocation",
      "queryname",
      "asyncprogresstrackingenabled",
      "asyncprogresstrackingcheckpointintervalms"
    )
  )
}
