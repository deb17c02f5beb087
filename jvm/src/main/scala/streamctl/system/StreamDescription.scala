package streamctl.system

/**
 * What the admin side says about one stream. `id` tells two incarnations of the same name apart
 * (Kafka's topic ID): a topic deleted and created again gets a new one, and offsets recorded
 * against the old one mean nothing in the new one.
 */
final case class StreamDescription(partitions: Int, id: Option[String])
