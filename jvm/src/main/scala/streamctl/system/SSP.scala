package streamctl.system

/**
 * A system stream partition: one partition of one stream of one system.
 *
 * {{{
 * val ssp = SSP.kafka("orders", 3)
 * ssp.key            // "kafka/orders/3"
 * SSP.parse("kafka/orders/3") == ssp
 * }}}
 */
final case class SSP(system: String, stream: String, partition: Int) {

  /**
   * Stable string form used in offsets and metadata store keys. `/` cannot occur in a Kafka topic
   * name.
   */
  def key: String = s"$system/$stream/$partition"
  override def toString: String = s"$stream-$partition"
}

object SSP {
  val KafkaSystem = "kafka"

  def kafka(stream: String, partition: Int): SSP = SSP(KafkaSystem, stream, partition)

  def parse(key: String): SSP = key.split('/') match {
    case Array(system, stream, p) if p.nonEmpty && p.forall(_.isDigit) =>
      SSP(system, stream, p.toInt)
    case _ => throw streamctl.StreamctlException(
        s"Not an SSP key: '$key' (expected system/stream/partition)"
      )
  }

  implicit val ordering: Ordering[SSP] = Ordering.by((s: SSP) => (s.system, s.stream, s.partition))
}
