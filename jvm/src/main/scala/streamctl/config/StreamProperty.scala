package streamctl.config

/**
 * A per-stream setting, `stream.<name>.<property>`. The stream name keeps the case the user wrote
 * (Kafka topic names are case-sensitive) and may contain dots; the property is the part after the
 * last dot.
 *
 * {{{
 * val Bootstrap = StreamProperty("bootstrap", Parsers.bool, "read it to its head before the other streams")
 * options.streams(Bootstrap, Seq("rates", "orders"))   // Map("rates" -> true)
 * }}}
 */
final case class StreamProperty[T](property: String, parse: (String, String) => T, doc: String) {
  def key(stream: String): String = s"${OptionSet.StreamPrefix}$stream.$property"
}
