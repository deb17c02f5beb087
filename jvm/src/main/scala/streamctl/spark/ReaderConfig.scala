package streamctl.spark

import streamctl.chooser.ChooserConfig
import streamctl.system.KafkaParams

/** What an executor needs from the source options: serializable, and nothing the driver alone knows. */
final case class ReaderConfig(
    kafka: KafkaParams,
    pollTimeoutMs: Long,
    failOnDataLoss: Boolean,
    intermediateStreams: Set[String],
    chooser: ChooserConfig = ChooserConfig.default)

object ReaderConfig {
  def apply(o: SourceOptions): ReaderConfig =
    ReaderConfig(o.kafka, o.pollTimeoutMs, o.failOnDataLoss, o.intermediateStreams, ChooserOptions.parse(o))
}
