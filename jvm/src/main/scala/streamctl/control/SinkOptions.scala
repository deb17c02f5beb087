package streamctl.control

import streamctl.StreamctlException
import streamctl.config.{OptionSet, OptionSpec}
import streamctl.system.KafkaParams

/**
 * The options of `writeStream.format("streamctl")`, checked when Spark builds the write (for
 * batch writes too, which send no control messages): the stream to write, the `kafka.*`
 * settings and the producer settings of [[ControlOptions]].
 *
 * {{{
 * val o = SinkOptions(Map("kafka.bootstrap.servers" -> "h:9092", "stream" -> "mid", "producer.count" -> "2",
 *                         "producer.name" -> "left"))
 * o.producerCount // 2
 * }}}
 */
final case class SinkOptions(raw: Map[String, String]) {
  import ControlOptions._

  private val options = SinkOptions.Registry.parse(raw)

  val kafka: KafkaParams = KafkaParams(options.withPrefix("kafka."))
  val stream: String = options(SinkOptions.Stream)
  val producerName: Option[String] = options.get(ProducerName)
  val producerCount: Int = options(ProducerCount)
  if (producerCount > 1 && producerName.isEmpty)
    throw StreamctlException(s"Option '${ProducerCount.name}' is $producerCount: give each of the $producerCount writing " +
      s"queries its own '${ProducerName.name}', so readers of stream '$stream' can tell them apart")
  val endOfStreamAfterAvailableNow: Boolean = options(EndOfStreamAfterAvailableNow)
  val idleTimeoutMs: Option[Long] = options(ProducerIdleTimeout)
}

object SinkOptions {
  val Stream: OptionSpec[String] = OptionSpec.string("stream", "the Kafka topic to write to")

  val Registry: OptionSet = new OptionSet("writeStream.format(\"streamctl\")",
    Seq(Stream, ControlOptions.ProducerName, ControlOptions.ProducerCount, ControlOptions.EndOfStreamAfterAvailableNow,
      ControlOptions.ProducerIdleTimeout),
    passThrough = Seq("kafka."),
    ignored = Set("path", "checkpointlocation", "queryname")) // Spark adds these itself for every sink
}
