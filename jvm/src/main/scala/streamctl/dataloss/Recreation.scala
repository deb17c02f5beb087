package streamctl.dataloss

/** A stream deleted and created again under the same name, told by its Kafka topic ID. */
final case class Recreation(stream: String, before: String, now: String) {
  def describe: String =
    s"stream '$stream' was deleted and created again (Kafka topic ID $before, now $now)"
}
