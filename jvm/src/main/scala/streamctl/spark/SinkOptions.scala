package streamctl.spark

import java.util.Locale

import streamctl.StreamctlException
import streamctl.system.KafkaParams

/** Options of `writeStream.format("streamctl")`. */
final case class SinkOptions(raw: Map[String, String]) {
  val kafka: KafkaParams = KafkaParams.fromOptions(raw)

  private val lower = raw.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }

  val stream: String = lower.get(SinkOptions.Stream).map(_.trim).filter(_.nonEmpty).getOrElse(
    throw StreamctlException(s"Option '${SinkOptions.Stream}' is required: the Kafka topic to write to"))

  raw.keys.foreach { k =>
    val lk = k.toLowerCase(Locale.ROOT)
    if (!SinkOptions.Known.contains(lk) && !lk.startsWith("kafka."))
      throw StreamctlException(s"Unknown option '$k' for writeStream.format(\"streamctl\"). Known options: " +
        s"${(SinkOptions.Known - "path" - "checkpointlocation").toSeq.sorted.mkString(", ")}, kafka.*")
  }
}

object SinkOptions {
  val Stream = "stream"
  // Spark adds these itself for every sink.
  private val Known = Set(Stream, "path", "checkpointlocation", "queryname") ++ SinkControl.OptionNames
}
