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

  /* By system, stream, partition. Written out rather than `Ordering.by` a tuple: planning sorts
   * thousands of SSPs per batch, and a tuple per comparison was a visible part of it. */
  implicit val ordering: Ordering[SSP] = new Ordering[SSP] {
    override def compare(a: SSP, b: SSP): Int =
      if (a eq b) 0
      else {
        val bySystem = if (a.system eq b.system) 0 else a.system.compareTo(b.system)
        if (bySystem != 0) bySystem
        else {
          val byStream = if (a.stream eq b.stream) 0 else a.stream.compareTo(b.stream)
          if (byStream != 0) byStream else Integer.compare(a.partition, b.partition)
        }
      }
  }
}
