package streamctl.system

import org.apache.kafka.clients.consumer.{ConsumerRecord, MockConsumer}
import org.apache.kafka.common.TopicPartition
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.chooser.RoundRobinChooser

/**
 * A consumer reused from the pool (the same task's next batch) may come back with partitions
 * its previous reader paused; a task reading several SSPs (a grown stream, a join by
 * partition) must still read them all. Kafka's MockConsumer keeps pause state across assign
 * and seek as the real consumer does.
 */
class KafkaTaskReaderReuseTest {
  @Test def partitionsPausedByAPreviousReaderAreRead(): Unit = {
    val consumer = new MockConsumer[Array[Byte], Array[Byte]]("earliest")
    val (a0, a2) = (new TopicPartition("a", 0), new TopicPartition("a", 2))
    consumer.assign(java.util.List.of(a0, a2))
    consumer.pause(java.util.List.of(a0)) // what a previous reader that finished a0 first leaves behind
    consumer.addRecord(new ConsumerRecord("a", 0, 0L, Array[Byte](1), Array[Byte](1)))
    consumer.addRecord(new ConsumerRecord("a", 2, 0L, Array[Byte](2), Array[Byte](2)))

    val reader = new KafkaTaskReader(Seq(SspRange(SSP.kafka("a", 0), 0, 1), SspRange(SSP.kafka("a", 2), 0, 1)),
      consumer, new RoundRobinChooser, BrokerWait("test", 2000, "poll.timeout.ms"))
    val read = Iterator.continually(reader.next()).takeWhile(_ != null).map(_.ssp.partition).toSet
    assertEquals(Set(0, 2), read)
  }
}
