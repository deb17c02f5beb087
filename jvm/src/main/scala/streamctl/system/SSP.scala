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

  /** Inverse of [[SSP.key]]; an error naming the key when it is not one. */
  def parse(key: String): SSP = (key.split('/') match {
    case Array(system, stream, partition) => of(system, stream, partition)
    case _ => None
  }).getOrElse(throw streamctl.StreamctlException(
    s"Not an SSP key: '$key' (expected system/stream/partition)"
  ))

  /**
   * The SSP the three parts of a key name, or None when they name none: an empty system or stream,
   * or a partition that is not a non-negative `Int` in ASCII digits. Shared by every key that
   * starts with an SSP's, so each reads its SSP by the same rule.
   */
  private[streamctl] def of(system: String, stream: String, partition: String): Option[SSP] =
    if (
      system.isEmpty || stream.isEmpty || partition.isEmpty || partition.length > 9 ||
      !partition.forall(c => c >= '0' && c <= '9')
    ) None
    else Some(SSP(system, stream, partition.toInt))

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
