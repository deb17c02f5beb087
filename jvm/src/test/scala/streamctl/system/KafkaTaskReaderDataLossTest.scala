package streamctl.system

import org.apache.kafka.clients.consumer.{ConsumerRecord, MockConsumer, OffsetOutOfRangeException}
import org.apache.kafka.common.TopicPartition
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.chooser.{RoundRobinChooser, TaskChooser}

/**
 * Records deleted between planning and reading (the planner skips the gaps it knows of): the reader
 * either fails naming them or, with `fail.on.data.loss=false`, moves to the oldest record and
 * reports the range of its own batch it skipped. Kafka's MockConsumer raises out-of-range errors
 * and answers beginning offsets as the real consumer does.
 */
class KafkaTaskReaderDataLossTest {
  private val tp = new TopicPartition("orders", 0)
  private val readWait = BrokerWait("127.0.0.1:9092", 2000, "kafka.default.api.timeout.ms")

  private def consumer(oldest: Long, upTo: Long): MockConsumer[Array[Byte], Array[Byte]] = {
    val c = KafkaMocks.consumer[Array[Byte], Array[Byte]]("none")
    c.assign(java.util.Collections.singletonList(tp))
    c.updateBeginningOffsets(java.util.Map.of(tp, oldest))
    c.setPollException(new OffsetOutOfRangeException(java.util.Map.of(tp, 10L)))
    (oldest until upTo).foreach(o =>
      c.addRecord(new ConsumerRecord("orders", 0, o, Array[Byte](), Array[Byte]()))
    )
    c
  }

  private def read(r: KafkaTaskReader): Seq[Long] =
    Iterator.continually(r.next()).takeWhile(_ != null).map(_.offset).toSeq

  @Test def skipsToTheOldestRecordAndReportsItsOwnShare(): Unit = {
    var reported = Seq.empty[SkippedRange]
    val r = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("orders", 0), 10, 20)),
      consumer(15, 20),
      TaskChooser.of(new RoundRobinChooser),
      readWait,
      failOnDataLoss = false,
      onSkipped = s => reported :+= s
    )
    assertEquals(15L to 19L, read(r))
    assertEquals(Seq(SkippedRange(SSP.kafka("orders", 0), 10, 15)), reported)
  }

  @Test def aRangeWhollyGoneEndsAtItsEnd(): Unit = {
    var reported = Seq.empty[SkippedRange]
    val r = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("orders", 0), 10, 20)),
      consumer(25, 30),
      TaskChooser.of(new RoundRobinChooser),
      readWait,
      failOnDataLoss = false,
      onSkipped = s => reported :+= s
    )
    assertEquals(Nil, read(r))
    assertEquals(
      Seq(SkippedRange(SSP.kafka("orders", 0), 10, 20)),
      reported,
      "the records 20..24 belong to the next batch"
    )
  }

  @Test def failsNamingTheRecordsByDefault(): Unit = {
    val r = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("orders", 0), 10, 20)),
      consumer(15, 20),
      TaskChooser.of(new RoundRobinChooser),
      readWait
    )
    val e = assertThrows(classOf[StreamctlException], () => { read(r); () })
    assertTrue(
      e.getMessage.startsWith(
        "Records are no longer on the broker: stream 'orders' partition 0 offset 10"
      ),
      e.getMessage
    )
  }

  // The partition now ends at 4, before offset 10 the task reads from; 4 and 5 are written anew.
  private def truncated(): MockConsumer[Array[Byte], Array[Byte]] = {
    val c = KafkaMocks.consumer[Array[Byte], Array[Byte]]("none")
    c.assign(java.util.Collections.singletonList(tp))
    c.updateBeginningOffsets(java.util.Map.of(tp, 0L))
    c.updateEndOffsets(java.util.Map.of(tp, 4L))
    c.setPollException(new OffsetOutOfRangeException(java.util.Map.of(tp, 10L)))
    Seq(4L, 5L).foreach(o =>
      c.addRecord(new ConsumerRecord("orders", 0, o, Array[Byte](), Array[Byte]()))
    )
    c
  }

  @Test def aRealTimeRangeTruncatedUnderItReadsOnFromTheBrokersEnd(): Unit = {
    var reported = Seq.empty[SkippedRange]
    val r = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("orders", 0), 10, SspRange.OpenEnded)),
      truncated(),
      TaskChooser.of(new RoundRobinChooser),
      readWait,
      failOnDataLoss = false,
      onSkipped = s => reported :+= s
    )
    assertEquals(4L, r.nextWithin(2000).offset, "the records written where the partition now ends")
    assertEquals(5L, r.nextWithin(2000).offset)
    assertEquals(Map(SSP.kafka("orders", 0) -> 6L), r.positions)
    assertEquals(0L, r.recordsSkipped, "a truncation loses records the query read; it skips none")
    assertEquals(Nil, reported)
  }

  @Test def aPlannedRangeTruncatedUnderItEndsWithoutSkipping(): Unit = {
    var reported = Seq.empty[SkippedRange]
    val r = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("orders", 0), 10, 20)),
      truncated(),
      TaskChooser.of(new RoundRobinChooser),
      readWait,
      failOnDataLoss = false,
      onSkipped = s => reported :+= s
    )
    assertEquals(Nil, read(r), "the next batch's planning continues from the broker's end")
    assertEquals(0L, r.recordsSkipped)
    assertEquals(Nil, reported)
  }

  @Test def aTruncatedPartitionFailsNamingItByDefault(): Unit = {
    val r = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("orders", 0), 10, SspRange.OpenEnded)),
      truncated(),
      TaskChooser.of(new RoundRobinChooser),
      readWait
    )
    val e = assertThrows(classOf[StreamctlException], () => { r.nextWithin(2000); () })
    assertEquals(
      "Kafka holds fewer records than this task has read: stream 'orders' partition 0 ends at offset 4, the task " +
        "was at offset 10; the partition was truncated (or deleted and created again with fewer records). Set option " +
        "'failOnDataLoss' to false to continue from the broker's end",
      e.getMessage
    )
  }

  // The partition was cut back to 5 records (an unclean leader election) after the batch was
  // planned up to 10: a fetch at its end returns nothing and raises nothing.
  private def cutBack(): MockConsumer[Array[Byte], Array[Byte]] = {
    val c = KafkaMocks.consumer[Array[Byte], Array[Byte]]("none")
    c.assign(java.util.Collections.singletonList(tp))
    c.updateBeginningOffsets(java.util.Map.of(tp, 0L))
    c.updateEndOffsets(java.util.Map.of(tp, 5L))
    (0L until 5L).foreach(o =>
      c.addRecord(new ConsumerRecord("orders", 0, o, Array[Byte](), Array[Byte]()))
    )
    c
  }

  @Test def aPlannedRangeCutBackUnderItEndsAtTheBrokersEndInsteadOfWaiting(): Unit = {
    val r = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("orders", 0), 0, 10)),
      cutBack(),
      TaskChooser.of(new RoundRobinChooser),
      BrokerWait("127.0.0.1:9092", 20000, "kafka.default.api.timeout.ms"),
      failOnDataLoss = false
    )
    val started = System.nanoTime()
    assertEquals(0L until 5L, read(r))
    assertTrue((System.nanoTime() - started) / 1000000L < 20000, "not the broker's wait")
    assertEquals(0L, r.recordsSkipped, "a truncation skips nothing the broker has")
  }

  @Test def aPlannedRangeCutBackUnderItFailsNamingThePartitionByDefault(): Unit = {
    val r = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("orders", 0), 0, 10)),
      cutBack(),
      TaskChooser.of(new RoundRobinChooser),
      BrokerWait("127.0.0.1:9092", 20000, "kafka.default.api.timeout.ms")
    )
    val e = assertThrows(classOf[StreamctlException], () => { read(r); () })
    assertTrue(
      e.getMessage.startsWith(
        "Kafka holds fewer records than this task has read: stream 'orders' partition 0 ends at offset 5"
      ),
      e.getMessage
    )
  }

  @Test def aBrokerThatReturnsNothingFailsNamingServersAndOption(): Unit = {
    val c = KafkaMocks.consumer[Array[Byte], Array[Byte]]("none")
    val r = new KafkaTaskReader(
      Seq(SspRange(SSP.kafka("orders", 0), 10, 20)),
      c,
      TaskChooser.of(new RoundRobinChooser),
      BrokerWait("127.0.0.1:9092", 300, "poll.timeout.ms")
    )
    val e = assertThrows(classOf[StreamctlException], () => { read(r); () })
    assertEquals(
      "Kafka at 127.0.0.1:9092 did not answer within 300 ms while reading stream 'orders' partition 0 at offset 10 " +
        "(reading up to 20) (is the broker up? check option 'kafka.bootstrap.servers'; option 'poll.timeout.ms' sets this wait)",
      e.getMessage
    )
  }
}
