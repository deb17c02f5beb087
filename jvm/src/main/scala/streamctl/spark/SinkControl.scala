package streamctl.spark

import java.util.Locale

import streamctl.StreamctlException
import streamctl.system.KafkaParams

/**
 * The control side of one streamctl sink in a streaming query: registers the sink's
 * [[ControlMessageSender]] with the query's [[QueryControl]] and relays the batch events.
 * Outside a streaming query (batch writes) it does nothing.
 *
 * Options: `producer.name` (default: the query name, else `query-<id>`), `producer.count`
 * (default 1; set both when several queries write one intermediate stream, each with its
 * own name and the same count), `end.of.stream.after.available.now` (default true: a
 * finished `Trigger.AvailableNow` run ends the stream; false for runs repeated on a schedule).
 *
 * {{{
 * val control = SinkControl(rawOptions, kafka, "mid", partitions = 4)
 * control.batchStarted(); ...; control.batchCommitted(epochId)
 * }}}
 */
final class SinkControl private (query: Option[QueryControl]) {
  def batchStarted(): Unit = query.foreach(_.batchStarted(QueryLookup.currentBatchId.getOrElse(-1L)))
  def batchCommitted(epochId: Long): Unit = query.foreach(_.batchCommitted(epochId))
  def batchAborted(epochId: Long): Unit = query.foreach(_.batchAborted(epochId))
}

object SinkControl {
  val ProducerName = "producer.name"
  val ProducerCount = "producer.count"
  val EndOfStreamAfterAvailableNow = "end.of.stream.after.available.now"
  val OptionNames: Set[String] = Set(ProducerName, ProducerCount, EndOfStreamAfterAvailableNow)

  def apply(raw: Map[String, String], kafka: KafkaParams, stream: String, partitions: => Int): SinkControl = {
    val lower = raw.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v.trim }
    val name = lower.get(ProducerName).filter(_.nonEmpty)
    val count = lower.get(ProducerCount).map(v => v.toIntOption.filter(_ >= 1).getOrElse(
      throw StreamctlException(s"Option '$ProducerCount' must be a positive integer, not '$v'"))).getOrElse(1)
    if (count > 1 && name.isEmpty)
      throw StreamctlException(s"Option '$ProducerCount' is $count: give each of the $count writing queries its own " +
        s"'$ProducerName', so readers of stream '$stream' can tell them apart")
    val afterAvailableNow = lower.get(EndOfStreamAfterAvailableNow)
      .map(v => SourceOptions.parseBool(EndOfStreamAfterAvailableNow, v)).getOrElse(true)
    val query = QueryControls.current()
    query.foreach { q =>
      q.addSink(new ControlMessageSender(kafka, stream, partitions, () => name.getOrElse(q.defaultProducerName), count),
        afterAvailableNow)
    }
    new SinkControl(query)
  }
}
