package streamctl.system

import org.apache.kafka.clients.consumer.{ConsumerRecord, MockConsumer}
import org.apache.kafka.common.TopicPartition
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.chooser.{RoundRobinChooser, TaskChooser}

/**
 * A consumer reused from the pool (the same task's next batch) may come back with partitions its
 * previous reader paused; a task reading several SSPs (a grown stream, a join by partition) must
 * still read them all. Kafka's MockConsumer keeps pause state across assign and seek as the real
 * consumer does.
 */
class KafkaTaskReaderReuseTest {
  @Test def partitionsPausedByAPreviousReaderAreRead(): Unit = {
    val consumer = KafkaMocks.consumer[Array[Byte], Array[Byte]]("earliest")
    val (a0, a2) = (new TopicPartition("a", 0), new TopicPartition("a", 2))
    consumer.assign(java.util.List.of(a0, a2))
    consumer.pause(
      java.util.Collections.singletonList(a0)
    ) // what a previous reader that finished a0 first leaves behind
    consumer.addRecord(new ConsumerRecord("a", 0, 0L, Array[Byte](1), Array[Byte](1)))
    consumer.addRecord(new ConsumerRecord("a", 2, 0L, Array[Byte](2), Array[Byte](2)))

    val reader = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("a", 0), 0, 1), SspRange(SSP.kafka("a", 2), 0, 1)),
      consumer,
      TaskChooser.of(new RoundRobinChooser),
      BrokerWait("test", 2000, "poll.timeout.ms")
    )
    val read = Iterator.continually(reader.next()).takeWhile(_ != null).map(_.ssp.partition).toSet
    assertEquals(Set(0, 2), read)
  }
}

/**
 * The next batch of a task starts where its previous one ended, on the same pooled consumer: the
 * records the previous reader fetched past its range serve it without a seek or a fetch. Kafka's
 * MockConsumer hands each record out once, so a reader that sought and polled again would find
 * nothing and time out.
 */
class KafkaTaskReaderPrefetchTest {
  private val tp = new TopicPartition("a", 0)
  private val readWait = BrokerWait("test", 500, "poll.timeout.ms")

  private def consumerWith(records: Int): MockConsumer[Array[Byte], Array[Byte]] = {
    val c = KafkaMocks.consumer[Array[Byte], Array[Byte]]("earliest")
    c.assign(java.util.Collections.singletonList(tp))
    c.updateBeginningOffsets(java.util.Map.of(tp, 0L))
    (0 until records).foreach(o =>
      c.addRecord(new ConsumerRecord("a", 0, o.toLong, Array[Byte](), Array[Byte](o.toByte)))
    )
    c
  }

  private def readAll(r: KafkaTaskReader): Seq[Long] =
    Iterator.continually(r.next()).takeWhile(_ != null).map(_.offset).toSeq

  @Test def theNextBatchReadsWhatThePreviousReaderFetchedPastItsEnd(): Unit = {
    val c = consumerWith(5)
    val first = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("a", 0), 0, 2)),
      c,
      TaskChooser.of(new RoundRobinChooser),
      readWait
    )
    assertEquals(Seq(0L, 1L), readAll(first))
    val left = first.unread
    assertEquals(5L, left.get(tp).next)
    val second = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("a", 0), 2, 5)),
      c,
      TaskChooser.of(new RoundRobinChooser),
      readWait,
      prefetched = left
    )
    assertEquals(Seq(2L, 3L, 4L), readAll(second))
  }

  @Test def recordsLeftByAnotherConsumerServeAndItsSuccessorContinuesAfterThem(): Unit = {
    val first = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("a", 0), 0, 2)),
      consumerWith(5),
      TaskChooser.of(new RoundRobinChooser),
      readWait
    )
    readAll(first)
    // The pool lent the task's consumer to another task; this one has read nowhere in "a" yet.
    val borrowed = consumerWith(7)
    val second = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("a", 0), 2, 7)),
      borrowed,
      TaskChooser.of(new RoundRobinChooser),
      readWait,
      prefetched = java.util.Map.of(tp, first.unread.get(tp).copy(positioned = false))
    )
    assertEquals(Seq(2L, 3L, 4L, 5L, 6L), readAll(second))
  }

  @Test def aStartOutsideWhatWasFetchedSeeks(): Unit = {
    val c = consumerWith(5)
    val first = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("a", 0), 0, 2)),
      c,
      TaskChooser.of(new RoundRobinChooser),
      readWait
    )
    readAll(first)
    val left = first.unread
    assertEquals(None, left.get(tp).indexOf(6L))
    assertEquals(Some(0), left.get(tp).indexOf(0L))
    // A replay from offset 1 (a restarted batch) is inside the window: it reads from memory too.
    val replay = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("a", 0), 1, 3)),
      c,
      TaskChooser.of(new RoundRobinChooser),
      readWait,
      prefetched = left
    )
    assertEquals(Seq(1L, 2L), readAll(replay))
  }

  @Test def recordsOfATopicSinceDeletedAndCreatedAgainAreNotServed(): Unit = {
    val c = consumerWith(5)
    val first = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("a", 0), 0, 2)),
      c,
      TaskChooser.of(new RoundRobinChooser),
      readWait,
      streamIds = Map("a" -> "old-id")
    )
    readAll(first)
    val left = first.unread
    // The new topic's records at the same offsets.
    (2 until 5).foreach(o =>
      c.addRecord(new ConsumerRecord("a", 0, o.toLong, Array[Byte](), Array[Byte](9)))
    )
    val second = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("a", 0), 2, 5)),
      c,
      TaskChooser.of(new RoundRobinChooser),
      readWait,
      prefetched = left,
      streamIds = Map("a" -> "new-id")
    )
    val values = Iterator.continually(second.next()).takeWhile(_ != null).map(_.value(0)).toSeq
    assertEquals(Seq[Byte](9, 9, 9), values)
  }
}
