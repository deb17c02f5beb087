package streamctl.planner

import streamctl.chooser.ChooserConfig
import streamctl.system.{BrokerWait, KafkaParams}

/**
 * What an executor needs from the source options: serializable, and nothing the driver alone knows.
 */
final case class ReaderConfig(
    kafka: KafkaParams,
    readWait: BrokerWait,
    failOnDataLoss: Boolean,
    intermediateStreams: Set[String],
    chooser: ChooserConfig = ChooserConfig.default,
    includeHeaders: Boolean = false,
    /* A real-time reader whose SSPs are all at end-of-stream ends its batch at once, so the query
     * stops (option stop.on.end.of.stream). A query kept running waits out its batch as an idle
     * reader does: ended at once, Spark would start the next batch at once, and the next. */
    endsBatchAtEndOfStream: Boolean = true
)

object ReaderConfig {

  /**
   * What readers of `o` need; `realTime` readers wait at the head of partitions for new records,
   * the others read bounded ranges ([[KafkaParams.forBoundedReads]]).
   */
  def apply(o: SourceOptions, realTime: Boolean): ReaderConfig =
    ReaderConfig(
      if (realTime) o.kafka else o.kafka.forBoundedReads,
      o.readWait,
      o.failOnDataLoss,
      o.intermediateStreams,
      o.chooser,
      o.includeHeaders,
      o.stopOnEndOfStream
    )
}
