package streamctl.control

import streamctl.StreamctlException
import streamctl.config.{OptionSpec, Parsers, StreamProperty}

/**
 * The in-band control options: on the source, which streams are intermediate and whether a query
 * stops once they all ended; on the sink, how the writing query names itself as a producer and when
 * it says it is idle or done.
 *
 * {{{
 * options.streams(ControlOptions.Intermediate, streams)   // Map("mid" -> true)
 * sinkOptions.idleTimeoutMs                               // Some(60000)
 * }}}
 */
object ControlOptions {
  val Intermediate: StreamProperty[Boolean] = StreamProperty(
    "intermediate",
    Parsers.bool,
    "the stream is written by streamctl's sink: strip the framing, read its control messages"
  )
  val StopOnEndOfStream: OptionSpec[Boolean] = OptionSpec.bool(
    "stop.on.end.of.stream",
    "stop the query once every input is at end-of-stream",
    default = true
  )

  val ProducerName: OptionSpec[String] = OptionSpec.string(
    "producer.name",
    "the producer name of the writing query in its control messages (default: the query name, else query-<id>)"
  )
  val ProducerCount: OptionSpec[Int] = OptionSpec.positiveInt(
    "producer.count",
    "how many queries write the stream, each with its own producer.name",
    default = Some(1)
  )
  val EndOfStreamAfterAvailableNow: OptionSpec[Boolean] = OptionSpec.bool(
    "end.of.stream.after.available.now",
    "a finished Trigger.AvailableNow run ends the stream (false: runs repeated on a schedule)",
    default = true
  )
  val ProducerIdleTimeout: OptionSpec[Option[Long]] = OptionSpec(
    "producer.idle.timeout",
    idleTimeout,
    "after this long without writing a record the query tells readers it is idle; none: never",
    Some(Some(60000L))
  )

  val WatermarkInterval: OptionSpec[Long] = OptionSpec(
    "watermark.interval",
    positiveDuration,
    "real-time mode (trigger(realTime=...)): how often the writing query checks its watermark and sends it when it " +
      "advanced (micro-batch queries send it after each batch); each check reads the metadata store",
    Some(50L)
  )

  private def positiveDuration(name: String, v: String): Long = {
    val ms = Parsers.durationMs(name, v)
    if (ms <= 0) throw StreamctlException(s"Option '$name' must be longer than zero; got '$v'")
    ms
  }

  private def idleTimeout(name: String, v: String): Option[Long] =
    if (v.trim.equalsIgnoreCase("none")) None
    else {
      val ms = Parsers.durationMs(name, v)
      if (ms <= 0)
        throw StreamctlException(s"Option '$name' must be longer than zero, or 'none'; got '$v'")
      Some(ms)
    }
}
