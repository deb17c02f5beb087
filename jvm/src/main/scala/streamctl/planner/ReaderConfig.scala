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
    includeHeaders: Boolean = false
)

object ReaderConfig {
  def apply(o: SourceOptions): ReaderConfig =
    ReaderConfig(
      o.kafka,
      o.readWait,
      o.failOnDataLoss,
      o.intermediateStreams,
      o.chooser,
      o.includeHeaders
    )
}
