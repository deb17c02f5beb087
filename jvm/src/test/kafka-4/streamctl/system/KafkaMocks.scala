package streamctl.system

import org.apache.kafka.clients.consumer.{
  ConsumerRecord,
  ConsumerRecords,
  MockConsumer,
  OffsetAndMetadata
}
import org.apache.kafka.common.TopicPartition

/**
 * Kafka's test doubles as kafka-clients 4.x builds them, without its deprecated constructors:
 * `MockConsumer` takes the offset reset's name and `ConsumerRecords` the next offsets (none here).
 * The kafka-3 folder has the same object for the 3.x clients (the Spark 3.5 jar's).
 *
 * {{{
 * val c = KafkaMocks.consumer[Array[Byte], Array[Byte]]("earliest")
 * }}}
 */
object KafkaMocks {
  def consumer[K, V](offsetReset: String): MockConsumer[K, V] = new MockConsumer[K, V](offsetReset)

  def records[K, V](
      byPartition: java.util.Map[TopicPartition, java.util.List[ConsumerRecord[K, V]]]
  ): ConsumerRecords[K, V] =
    new ConsumerRecords[K, V](byPartition, java.util.Map.of[TopicPartition, OffsetAndMetadata]())

  /** A `MockConsumer` to extend, resetting to the earliest offset. */
  class FromEarliest[K, V] extends MockConsumer[K, V]("earliest")
}
