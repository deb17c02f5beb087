package streamctl.system

import java.util.Locale

import org.apache.kafka.clients.consumer.{
  ConsumerRecord,
  ConsumerRecords,
  MockConsumer,
  OffsetResetStrategy
}
import org.apache.kafka.common.TopicPartition

/**
 * Kafka's test doubles as kafka-clients 3.x builds them (the Spark 3.5 jar compiles against 3.4.1):
 * `MockConsumer` takes the `OffsetResetStrategy` enum (4.0 takes its name and deprecates the enum)
 * and `ConsumerRecords` has no next offsets (4.0 added them). The kafka-4 folder has the same
 * object.
 *
 * {{{
 * val c = KafkaMocks.consumer[Array[Byte], Array[Byte]]("earliest")
 * }}}
 */
object KafkaMocks {
  def consumer[K, V](offsetReset: String): MockConsumer[K, V] =
    new MockConsumer[K, V](OffsetResetStrategy.valueOf(offsetReset.toUpperCase(Locale.ROOT)))

  def records[K, V](
      byPartition: java.util.Map[TopicPartition, java.util.List[ConsumerRecord[K, V]]]
  ): ConsumerRecords[K, V] = new ConsumerRecords[K, V](byPartition)

  /** A `MockConsumer` to extend, resetting to the earliest offset. */
  class FromEarliest[K, V] extends MockConsumer[K, V](OffsetResetStrategy.EARLIEST)
}
