package streamctl.spark

import streamctl.control.SinkOptions

/**
 * The control side of one streamctl sink in a streaming query: makes sure the query's
 * [[QueryControl]] knows the sink (normally it already does, from the query's start) and
 * relays the batch events of the sink's writes. Outside a streaming query (batch writes)
 * it does nothing.
 *
 * Its options are [[streamctl.control.SinkOptions]].
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
  /**
   * Makes `query` send the control messages of the sink with these `writeStream` options
   * (once per stream: Spark builds a sink's write at every batch).
   */
  def register(query: QueryControl, raw: Map[String, String]): Unit = {
    val options = SinkOptions(raw)
    query.addSink((options.kafka.bootstrapServers, options.stream), options.endOfStreamAfterAvailableNow) {
      new ControlMessageSender(options.kafka, options.stream, () => options.producerName.getOrElse(query.defaultProducerName),
        options.producerCount, options.idleTimeoutMs, () => query.running)
    }
  }

  /** The control of the sink whose write a batch of the query running on this thread builds. */
  def apply(raw: Map[String, String]): SinkControl = {
    val query = QueryControls.current()
    query.foreach(register(_, raw))
    new SinkControl(query)
  }
}
