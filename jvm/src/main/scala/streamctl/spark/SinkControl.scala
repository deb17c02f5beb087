package streamctl.spark

import java.util.Locale

import streamctl.StreamctlException

/**
 * The control side of one streamctl sink in a streaming query: makes sure the query's
 * [[QueryControl]] knows the sink (normally it already does, from the query's start) and
 * relays the batch events of the sink's writes. Outside a streaming query (batch writes)
 * it does nothing.
 *
 * Options: `producer.name` (default: the query name, else `query-<id>`), `producer.count`
 * (default 1; set both when several queries write one intermediate stream, each with its
 * own name and the same count), `end.of.stream.after.available.now` (default true: a
 * finished `Trigger.AvailableNow` run ends the stream; false for runs repeated on a schedule),
 * `producer.idle.timeout` (default `1min`: after that long without writing a record the
 * query tells readers it is idle; `none` never does).
 *
 * {{{
 * val control = SinkControl(writeOptions)          // when a batch builds the sink's write
 * control.batchStarted(); ...; control.batchCommitted(epochId, wroteData = true)
 * }}}
 */
final class SinkControl private (query: Option[QueryControl]) {
  def batchStarted(): Unit = query.foreach(_.batchStarted(QueryLookup.currentBatchId.getOrElse(-1L)))
  def batchCommitted(epochId: Long, wroteData: Boolean): Unit = query.foreach(_.batchCommitted(epochId, wroteData))
  def batchAborted(epochId: Long): Unit = query.foreach(_.batchAborted(epochId))
}

object SinkControl {
  val ProducerName = "producer.name"
  val ProducerCount = "producer.count"
  val EndOfStreamAfterAvailableNow = "end.of.stream.after.available.now"
  val ProducerIdleTimeout = "producer.idle.timeout"
  val DefaultIdleTimeout = "1min"
  val OptionNames: Set[String] = Set(ProducerName, ProducerCount, EndOfStreamAfterAvailableNow, ProducerIdleTimeout)

  /** The producer settings of a sink, checked. */
  final case class Settings(name: Option[String], count: Int, endOfStreamAfterAvailableNow: Boolean, idleTimeoutMs: Option[Long])

  def settings(raw: Map[String, String], stream: String): Settings = {
    val lower = raw.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v.trim }
    val name = lower.get(ProducerName).filter(_.nonEmpty)
    val count = lower.get(ProducerCount).map(v => v.toIntOption.filter(_ >= 1).getOrElse(
      throw StreamctlException(s"Option '$ProducerCount' must be a positive integer, not '$v'"))).getOrElse(1)
    if (count > 1 && name.isEmpty)
      throw StreamctlException(s"Option '$ProducerCount' is $count: give each of the $count writing queries its own " +
        s"'$ProducerName', so readers of stream '$stream' can tell them apart")
    val afterAvailableNow = lower.get(EndOfStreamAfterAvailableNow)
      .map(v => SourceOptions.parseBool(EndOfStreamAfterAvailableNow, v)).getOrElse(true)
    val idle = lower.getOrElse(ProducerIdleTimeout, DefaultIdleTimeout) match {
      case v if v.equalsIgnoreCase("none") => None
      case v =>
        val ms = DurationOption.millis(ProducerIdleTimeout, v)
        if (ms <= 0) throw StreamctlException(s"Option '$ProducerIdleTimeout' must be longer than zero, or 'none'; got '$v'")
        Some(ms)
    }
    Settings(name, count, afterAvailableNow, idle)
  }

  /**
   * Makes `query` send the control messages of the sink with these `writeStream` options
   * (once per stream: Spark builds a sink's write at every batch).
   */
  def register(query: QueryControl, raw: Map[String, String]): Unit = {
    val options = SinkOptions(raw)
    val s = settings(raw, options.stream)
    query.addSink((options.kafka.bootstrapServers, options.stream), s.endOfStreamAfterAvailableNow) {
      new ControlMessageSender(options.kafka, options.stream, () => s.name.getOrElse(query.defaultProducerName), s.count,
        s.idleTimeoutMs, () => query.running)
    }
  }

  /** The control of the sink whose write a batch of the query running on this thread builds. */
  def apply(raw: Map[String, String]): SinkControl = {
    val query = QueryControls.current()
    query.foreach(register(_, raw))
    new SinkControl(query)
  }
}
