package streamctl.control

import scala.collection.mutable

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.system.SSP

class ProducerControlTest {

  /** A stream whose partition count the test sets; records what each partition received. */
  private final class FakeStream(var count: Int) extends ProducerControl.Wire {
    val received = mutable.Map.empty[Int, mutable.ArrayBuffer[String]]
    var failNext = false
    var asked = 0
    // The partition count the last end-of-stream said.
    var endOfStreamSaid: Option[Int] = None
    override def partitions(): Int = { asked += 1; count }
    override def send(value: Array[Byte], to: Range, what: String): Unit = {
      if (failNext) { failNext = false; throw StreamctlException(s"broker down sending $what") }
      val shown = IntermediateMessage.decodeControl(SSP.kafka("mid", 0), 0, value) match {
        case WatermarkMessage(_, _, ts) => s"wm $ts"
        case EndOfStreamMessage(_, _, n) => endOfStreamSaid = n; "eos"
        case IdleMessage(_, _, ts) => s"idle${ts.fold("")(t => s" $t")}"
        case ActiveMessage(_, _, ts) => s"active${ts.fold("")(t => s" $t")}"
      }
      to.foreach(p => received.getOrElseUpdate(p, mutable.ArrayBuffer.empty) += shown)
    }
    def at(p: Int): Seq[String] = received.get(p).fold(Seq.empty[String])(_.toSeq)
    def clear(): Unit = received.clear()
  }

  private val messages = ControlEncoder.forProducer("by_user", 1)

  @Test def watermarksGoToEveryPartitionTheStreamHasNowAndNewPartitionsCatchUp(): Unit = {
    val stream = new FakeStream(2)
    val c = new ProducerControl(messages, idleTimeoutMs = None, startMs = 0, stream)
    c.batchStarted()
    c.batchCommitted(10, wroteData = true, watermark = Some(100))
    assertEquals(Seq("wm 100"), stream.at(1))
    stream.count = 4 // the stream grew while the query ran
    c.batchStarted()
    c.batchCommitted(20, wroteData = true, watermark = Some(100))
    assertEquals(Seq("wm 100"), stream.at(0), "not resent where it already is")
    assertEquals(
      Seq("wm 100"),
      stream.at(3),
      "the new partitions get the current watermark without waiting for a new one"
    )
    c.batchCommitted(30, wroteData = true, watermark = Some(200))
    c.endOfStream(Some(200))
    for (p <- 0 until 4) assertEquals("eos", stream.at(p).last)
    assertEquals(Seq("wm 100", "wm 200", "eos"), stream.at(3))
    stream.count = 6
    c.endOfStream(Some(200)) // a retry after a failure elsewhere: readers count a producer once
    assertEquals(
      Seq("wm 200", "eos"),
      stream.at(5),
      "end-of-stream reaches the partitions there are when it is sent"
    )
  }

  @Test def endOfStreamSaysHowManyPartitionsItWentToNeverFewerThanABatchWrote(): Unit = {
    val stream = new FakeStream(4)
    val c = new ProducerControl(messages, idleTimeoutMs = None, startMs = 0, stream)
    c.batchStarted()
    assertEquals(4, c.batchPartitionCount())
    c.batchCommitted(10, wroteData = true, watermark = None)
    c.endOfStream(None)
    assertEquals(Some(4), stream.endOfStreamSaid)
    // A broker whose metadata lags says 3: the batch wrote partition 3, so end-of-stream goes
    // there too and says 4. Saying 3 would make readers count the producer ended on partition 3
    // before reading its data there.
    stream.count = 3
    stream.clear()
    c.endOfStream(None)
    assertEquals(Some(4), stream.endOfStreamSaid)
    assertEquals(Seq("eos"), stream.at(3))
  }

  @Test def realTimeWatermarksAskThePartitionCountOncePerBatch(): Unit = {
    val stream = new FakeStream(2)
    val c = new ProducerControl(messages, idleTimeoutMs = None, startMs = 0, stream)
    c.batchStarted()
    c.watermarkDue(Some(100))
    c.watermarkDue(Some(100)) // not advanced: nothing sent
    c.watermarkDue(Some(150))
    assertEquals(Seq("wm 100", "wm 150"), stream.at(1))
    assertEquals(
      1,
      stream.asked,
      "the batch's writers write the partitions there were when it started"
    )
    stream.count = 3 // grew while the batch ran: its writers do not write partition 2
    c.watermarkDue(Some(200))
    assertEquals(Seq(), stream.at(2))
    c.batchCommitted(10, wroteData = true, watermark = Some(200))
    assertEquals(
      Seq("wm 200"),
      stream.at(2),
      "the commit asks afresh: the new partition catches up"
    )
    c.batchStarted()
    c.watermarkDue(Some(300))
    assertEquals(Seq("wm 200", "wm 300"), stream.at(2), "the next batch asks again")
  }

  @Test def aRealTimeBoundaryAsksThePartitionCountOnceForTheCommitAndTheNextBatch(): Unit = {
    val stream = new FakeStream(2)
    val c = new ProducerControl(messages, idleTimeoutMs = None, startMs = 0, stream)
    c.batchStarted()
    assertEquals(2, c.batchPartitionCount())
    stream.count = 3 // grew during the batch
    c.batchCommitted(10, wroteData = true, watermark = Some(100), realTime = true)
    assertEquals(
      Seq("wm 100"),
      stream.at(2),
      "the commit asks afresh: the new partition gets the watermark"
    )
    assertEquals(2, stream.asked)
    c.batchStarted()
    assertEquals(
      3,
      c.batchPartitionCount(),
      "the next batch's writers write the partition the commit saw"
    )
    assertEquals(
      2,
      stream.asked,
      "one request per real-time boundary, not one at the commit and one at the start"
    )
    c.batchCommitted(20, wroteData = true, watermark = Some(200)) // micro-batch: nothing carried
    c.batchStarted()
    c.batchPartitionCount()
    assertEquals(
      4,
      stream.asked,
      "a micro-batch asks at its start: the previous commit may be a trigger interval old"
    )
  }

  @Test def aBatchsWritersAndItsControlMessagesShareOnePartitionCountAskedOncePerBatch(): Unit = {
    val stream = new FakeStream(2)
    val c = new ProducerControl(messages, idleTimeoutMs = None, startMs = 0, stream)
    c.batchStarted()
    assertEquals(2, c.batchPartitionCount(), "the writers' count")
    c.watermarkDue(Some(100))
    assertEquals(2, c.batchPartitionCount())
    assertEquals(
      1,
      stream.asked,
      "Spark builds the sink's write at every batch: one request per batch, not one per ask"
    )
    stream.count = 3
    assertEquals(
      2,
      c.batchPartitionCount(),
      "the batch's writers keep the partitions its watermarks go to"
    )
    c.batchCommitted(10, wroteData = true, watermark = Some(100))
    assertEquals(Seq("wm 100"), stream.at(2), "the commit asks afresh")
    c.batchStarted()
    assertEquals(3, c.batchPartitionCount(), "the next batch's writers write the new partition")
  }

  @Test def aProducerBackFromIdleAsksOnceForItsActiveMessageAndItsWriters(): Unit = {
    val stream = new FakeStream(2)
    val c = new ProducerControl(messages, idleTimeoutMs = Some(1000), startMs = 0, stream)
    c.batchStarted()
    assertEquals(Seq("active"), stream.at(1))
    assertEquals(2, c.batchPartitionCount())
    assertEquals(1, stream.asked)
  }

  @Test def aProducerWithNothingToWriteSaysSoAndComesBackBeforeItsNextData(): Unit = {
    val stream = new FakeStream(2)
    val c = new ProducerControl(messages, idleTimeoutMs = Some(1000), startMs = 0, stream)
    c.batchStarted()
    assertEquals(
      Seq("active"),
      stream.at(0),
      "a run's first batch: a previous run may have left it idle"
    )
    c.batchCommitted(100, wroteData = true, watermark = Some(50))
    assertEquals(Some(1100L), c.nextCheckMs)
    c.tick(1099)
    assertEquals(Seq("active", "wm 50"), stream.at(0), "not idle before the timeout")
    c.batchStarted()
    assertEquals(None, c.nextCheckMs, "never idle while a batch runs")
    c.batchCommitted(600, wroteData = false, watermark = Some(50))
    c.tick(1100)
    assertEquals(
      Seq("active", "wm 50", "idle 50"),
      stream.at(1),
      "an empty batch is not data: idle 1 s after the last record"
    )
    assertEquals(
      Some(2100L),
      c.nextCheckMs,
      "while idle: checks for new partitions once per timeout"
    )
    stream.count = 3
    c.tick(2100)
    assertEquals(Seq("idle 50"), stream.at(2), "a new partition learns the producer is idle")
    c.tick(3100)
    assertEquals(Seq("idle 50"), stream.at(2), "said once")

    c.batchStarted()
    for (p <- 0 until 3)
      assertEquals("active 50", stream.at(p).last, "back before the batch writes")
    c.batchCommitted(3200, wroteData = true, watermark = Some(70))
    assertEquals(Seq("idle 50", "active 50", "wm 70"), stream.at(2))
    assertEquals(Some(4200L), c.nextCheckMs)
  }

  @Test def anEmptyBatchLongAfterTheLastRecordEndsIdleAgainAtItsCommit(): Unit = {
    val stream = new FakeStream(1)
    val c = new ProducerControl(messages, idleTimeoutMs = Some(1000), startMs = 0, stream)
    c.tick(1000)
    assertEquals(
      Seq("idle"),
      stream.at(0),
      "a run that writes nothing goes idle after the timeout, without a watermark"
    )
    c.batchStarted()
    c.batchCommitted(5000, wroteData = false, watermark = Some(9))
    assertEquals(Seq("idle", "active", "wm 9", "idle 9"), stream.at(0))
  }

  @Test def aRunThatFinishesWithoutEndingTheStreamSaysItIsIdle(): Unit = {
    val stream = new FakeStream(2)
    val c = new ProducerControl(messages, idleTimeoutMs = Some(60000), startMs = 0, stream)
    c.batchStarted()
    c.batchCommitted(10, wroteData = true, watermark = Some(5))
    c.runFinished(20)
    assertEquals(Seq("active", "wm 5", "idle 5"), stream.at(1), "at once, not after the timeout")
    c.runFinished(30)
    assertEquals(Seq("active", "wm 5", "idle 5"), stream.at(1), "said once")
    val off = new FakeStream(1)
    new ProducerControl(messages, idleTimeoutMs = None, startMs = 0, off).runFinished(20)
    assertEquals(Seq(), off.at(0), "idle messages off")
  }

  @Test def withoutATimeoutThereAreNoIdleOrActiveMessages(): Unit = {
    val stream = new FakeStream(1)
    val c = new ProducerControl(messages, idleTimeoutMs = None, startMs = 0, stream)
    c.batchStarted()
    c.batchCommitted(1, wroteData = false, watermark = Some(5))
    c.tick(1000000)
    assertEquals(None, c.nextCheckMs)
    assertEquals(Seq("wm 5"), stream.at(0))
  }

  @Test def aFailedSendIsAttemptedAgain(): Unit = {
    val stream = new FakeStream(1)
    val c = new ProducerControl(messages, idleTimeoutMs = Some(1000), startMs = 0, stream)
    stream.failNext = true
    assertThrows(classOf[StreamctlException], () => c.tick(1000))
    c.tick(1001)
    assertEquals(Seq("idle"), stream.at(0))
    c.batchStarted()
    stream.failNext = true
    assertThrows(
      classOf[StreamctlException],
      () => c.batchCommitted(2000, wroteData = true, watermark = Some(8))
    )
    c.batchCommitted(2001, wroteData = true, watermark = Some(8))
    assertEquals(Seq("idle", "active", "wm 8"), stream.at(0))
  }
}
