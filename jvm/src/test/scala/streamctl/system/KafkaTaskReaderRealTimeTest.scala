package streamctl.system

import org.apache.kafka.clients.consumer.{ConsumerRecord, MockConsumer}
import org.apache.kafka.common.TopicPartition
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.chooser.{ChooserConfig, ChooserFactory}

/**
 * Real-time reading (`nextWithin`) over Kafka's MockConsumer: open-ended ranges, the chooser picks
 * among the records that arrived (an SSP without records holds nobody back), the reader returns
 * early after a record its decoder consumed, and `positions` tell where a reader that stops now
 * resumes (an envelope offered but not chosen is not consumed).
 */
class KafkaTaskReaderRealTimeTest {
  private val (a, b) = (SSP.kafka("a", 0), SSP.kafka("b", 0))
  private val readWait = BrokerWait("127.0.0.1:9092", 2000, "kafka.default.api.timeout.ms")

  private def consumer(records: (SSP, Long)*): MockConsumer[Array[Byte], Array[Byte]] = {
    val c = KafkaMocks.consumer[Array[Byte], Array[Byte]]("none")
    val tps = Seq(a, b).map(s => new TopicPartition(s.stream, s.partition))
    c.assign(java.util.List.of(tps: _*))
    c.updateBeginningOffsets(java.util.Map.of(tps(0), 0L, tps(1), 0L))
    records.foreach { case (s, o) =>
      c.addRecord(new ConsumerRecord(
        s.stream,
        s.partition,
        o,
        Array[Byte](),
        Array[Byte](s.stream.head.toByte)
      ))
    }
    c
  }

  private def open(ranges: Seq[SspRange]) = ranges.map(r => r.ssp -> r.from).toMap

  @Test def choosesAmongArrivedRecordsAndKnowsWhereToResume(): Unit = {
    val ranges = Seq(SspRange(a, 0, Long.MaxValue), SspRange(b, 5, Long.MaxValue))
    val config = ChooserConfig.default.copy(priorities = Map("a" -> 1))
    val c = consumer(a -> 0L, a -> 1L)
    val r = new KafkaTaskReader(
      ranges,
      c,
      ChooserFactory.forTask(config, open(ranges), Map.empty),
      readWait
    )
    // b has nothing at all: a's records still come, in a's order.
    assertEquals(0L, r.nextWithin(1000).offset)
    assertEquals(1L, r.nextWithin(1000).offset)
    assertNull(r.nextWithin(50), "nothing more arrived within the timeout")
    assertEquals(Map(a -> 2L, b -> 5L), r.positions)
  }

  @Test def returnsEarlyAfterARecordItsDecoderConsumed(): Unit = {
    val ranges = Seq(SspRange(a, 0, Long.MaxValue))
    val c = consumer(a -> 0L)
    /* The second poll brings record 1: a reader that did not return after the control message would
     * hand it out. */
    c.schedulePollTask(() => ())
    c.schedulePollTask(() =>
      c.addRecord(new ConsumerRecord("a", 0, 1L, Array[Byte](), Array[Byte]('a'.toByte)))
    )
    val control: EnvelopeDecoder = e => e.offset != 0 // offset 0 is a control message
    val r = new KafkaTaskReader(
      ranges,
      c,
      ChooserFactory.forReader(ChooserConfig.default, open(ranges), Map.empty),
      readWait,
      decoders = _ => control
    )
    assertNull(r.nextWithin(60000), "the caller hears of the control message first")
    assertEquals(Map(a -> 1L), r.positions, "the control message is consumed")
    assertEquals(1L, r.nextWithin(60000).offset)
    assertEquals(Map(a -> 2L), r.positions)
  }

  @Test def aPositionPastATransactionMarkerMovesTheSspOn(): Unit = {
    val ranges = Seq(SspRange(a, 0, Long.MaxValue), SspRange(b, 0, Long.MaxValue))
    val c = consumer(a -> 0L, a -> 1L, b -> 0L)
    // Offset 2 of a is a transaction's commit marker: the consumer's position passes it, no record.
    c.schedulePollTask(() => ())
    c.schedulePollTask(() => c.seek(new TopicPartition("a", 0), 3L))
    val config = ChooserConfig.default.copy(bootstrapStreams = Set("a"))
    val r = new KafkaTaskReader(
      ranges,
      c,
      ChooserFactory.forTask(config, open(ranges), Map(a -> 3L)),
      readWait
    )
    assertEquals(
      Seq("a" -> 0L, "a" -> 1L, "b" -> 0L),
      (1 to 3).map { _ =>
        val e = r.nextWithin(5000)
        assertNotNull(e, "b waits for a's head, which the marker's offset reaches")
        e.ssp.stream -> e.offset
      }
    )
    assertEquals(Map(a -> 3L, b -> 1L), r.positions)
  }

  @Test def aTaskWhoseRangesAreAllReadReturnsNothing(): Unit = {
    val r = new KafkaTaskReader(
      Seq(SspRange(a, 0, 1)),
      consumer(a -> 0L),
      ChooserFactory.forReader(ChooserConfig.default, Map(a -> 0L), Map.empty),
      readWait
    )
    assertEquals(0L, r.nextWithin(1000).offset)
    assertNull(r.nextWithin(50), "nothing is left to read, which is no stuck chooser")
  }

  @Test def aChooserThatReturnsAnEnvelopeTwiceIsNamed(): Unit = {
    // Peeks instead of taking: the envelope it keeps returning is refilled with a's next record.
    class PeekingChooser extends streamctl.chooser.MessageChooser {
      private val held = new java.util.ArrayDeque[Envelope]()
      override def update(envelope: Envelope): Unit = held.add(envelope)
      override def choose(): Envelope = held.peekFirst()
    }
    val ranges = Seq(SspRange(a, 0, 2), SspRange(b, 0, 1))
    val r = new KafkaTaskReader(
      ranges,
      consumer(a -> 0L, a -> 1L, b -> 0L),
      streamctl.chooser.TaskChooser.of(new PeekingChooser),
      readWait
    )
    val e =
      assertThrows(classOf[streamctl.StreamctlException], () => { (1 to 5).foreach(_ => r.next()) })
    assertTrue(
      e.getMessage.contains("PeekingChooser") && e.getMessage.contains("which it was not holding"),
      e.getMessage
    )
  }
}
