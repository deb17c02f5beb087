package streamctl.control

import scala.collection.mutable

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException

/**
 * Whole runs of [[RunControl]] as Spark drives it (sources planning, batches starting and
 * committing, the run stopping), with sinks that record what they would send; the real sender is
 * exercised by the Python tests on a broker.
 */
class RunControlScenarioTest {

  /** Records what would go to Kafka. */
  private final class Recorder(val stream: String) extends ControlSink {
    val sent = mutable.ArrayBuffer.empty[String]
    private var last = Long.MinValue
    override def producer = "q"
    override def target = ("servers", stream)
    private def watermark(ts: Option[Long]): Unit = ts.filter(_ > last).foreach { t =>
      last = t; sent += s"wm $t"
    }
    override def batchStarted(): Unit = sent += "start"
    override def batchPartitionCount(): Int = 2
    override def batchCommitted(wroteData: Boolean, ts: Option[Long]): Unit = watermark(ts)
    override def batchAborted(): Unit = ()
    var realTime: Option[() => Option[Long]] = None
    override def realTime(wm: () => Option[Long]): Unit = realTime = Some(wm)
    override def endOfStream(ts: Option[Long]): Unit = { watermark(ts); sent += "eos" }
    override def runFinished(): Unit = sent += "idle"
    var closed = false
    override def close(): Unit = closed = true
  }

  private def add(q: RunControl, sink: Recorder, afterAvailableNow: Boolean): Unit =
    q.addSink(sink.target, afterAvailableNow)(sink)

  private final class Source(
      var watermark: Option[Long],
      intermediate: Boolean = true,
      stop: Boolean = true
  ) extends ControlSource {
    override def hasIntermediateStreams: Boolean = intermediate
    override def upstreamWatermark: Option[Long] = watermark
    override def stopOnEndOfStream: Boolean = stop
  }

  // A query without `withWatermark` that has not failed, as Spark would describe it.
  private object NoQuery extends RunControl.Query {
    override def name: Option[String] = None
    override def eventTimeWatermark(running: Option[Long]): Option[Option[Long]] = None
    override def failed: Boolean = false
    override def running: Boolean = false
  }

  private def query(sources: Source*): RunControl = {
    // Released as the registry of spark.QueryControl releases a run: it closes it.
    lazy val q: RunControl =
      new RunControl("not-a-running-query", NoQuery, release = () => q.close())
    sources.foreach(q.addSource)
    q
  }

  @Test def endOfStreamOnlyOnceEverySourceEndedIdleAndNoBatchIsInFlight(): Unit = {
    val (a, b) = (new Source(Some(10)), new Source(Some(20)))
    val q = query(a, b)
    val out = new Recorder("mid")
    add(q, out, afterAvailableNow = true)
    add(q, new Recorder("mid"), afterAvailableNow = true) // the same sink built twice

    q.sourcePlanned(a, Some(InputsEnded.EndOfStream), newData = false)
    q.sourceStopped()
    assertEquals(Seq(), out.sent.toSeq, "source b has not ended")

    q.sourcePlanned(b, Some(InputsEnded.EndOfStream), newData = false)
    q.batchStarted(7) // a batch that only closes windows still writes
    q.sourceStopped()
    assertEquals(Seq("start"), out.sent.toSeq)

    q.batchCommitted(7, wroteData = true)
    assertEquals(
      Seq("start", "wm 10"),
      out.sent.toSeq,
      "after a batch: the minimum over the inputs"
    )
    q.sourcePlanned(a, Some(InputsEnded.EndOfStream), newData = false)
    q.sourcePlanned(b, Some(InputsEnded.EndOfStream), newData = false)
    a.watermark = Some(15)
    q.sourceStopped()
    q.sourceStopped() // every source of the query calls it
    assertEquals(Seq("start", "wm 10", "wm 15", "eos"), out.sent.toSeq)
    assertTrue(out.closed, "the stopped run closes its sinks")
  }

  @Test def aRealTimeQuerySendsItsWatermarkBetweenBatchesAndABatchThatReadsNothingHoldsNoEndBack()
      : Unit = {
    val a = new Source(Some(10))
    val q = query(a)
    val early = new Recorder("early")
    add(q, early, afterAvailableNow = true)
    q.realTimeSource()
    val late = new Recorder("late")
    add(q, late, afterAvailableNow = true)
    for (sink <- Seq(early, late)) {
      assertEquals(
        Some(10L),
        sink.realTime.flatMap(_()),
        "sinks, whenever added, send the query's watermark as it advances"
      )
    }

    q.sourcePlanned(a, Some(InputsEnded.EndOfStream), newData = false)
    q.batchStarted(3) // real-time batches run whether or not there is anything to read
    q.sourceStopped()
    assertEquals(
      Seq("start", "wm 10", "eos"),
      early.sent.toSeq,
      "a batch whose sources all ended writes nothing"
    )

    val b = new Source(Some(10))
    val other = query(b)
    val out = new Recorder("out")
    add(other, out, afterAvailableNow = true)
    other.realTimeSource()
    other.sourcePlanned(b, None, newData = true)
    other.batchStarted(1)
    other.sourcePlanned(
      b,
      Some(InputsEnded.EndOfStream),
      newData = false
    ) // its readers heard end-of-stream
    other.sourceStopped()
    assertEquals(
      Seq("start"),
      out.sent.toSeq,
      "stopped before its batch committed: its data may come again"
    )
  }

  @Test def aFinishedAvailableNowRunEndsOnlySinksThatAgree(): Unit = {
    val s = new Source(None, intermediate = false)
    val q = query(s)
    val (ends, keepsOpen) = (new Recorder("a"), new Recorder("b"))
    add(q, ends, afterAvailableNow = true)
    add(q, keepsOpen, afterAvailableNow = false)
    q.sourcePlanned(s, Some(InputsEnded.AvailableNow), newData = true)
    q.sourceStopped()
    assertEquals(Seq(), ends.sent.toSeq, "new data: the target is not reached yet")
    q.sourcePlanned(s, Some(InputsEnded.AvailableNow), newData = false)
    q.sourceStopped()
    assertEquals(
      Seq("eos"),
      ends.sent.toSeq,
      "no intermediate input and no withWatermark: no watermark"
    )
    assertEquals(Seq("idle"), keepsOpen.sent.toSeq, "the stream goes on: idle until the next run")
  }

  @Test def anExplicitEndIsSentOnceAndRefusedMidBatch(): Unit = {
    val s = new Source(Some(5))
    val q = query(s)
    val out = new Recorder("mid")
    add(q, out, afterAvailableNow = false)
    q.requestEnd()
    assertTrue(q.endRequested)
    q.batchStarted(3)
    q.batchAborted(3) // part of its data may be written; the retry writes it again
    val e = assertThrows(classOf[StreamctlException], () => q.completeEnd())
    assertTrue(e.getMessage.contains("batch 3"), e.getMessage)
    q.batchStarted(3)
    q.batchCommitted(3, wroteData = false)
    q.sourcePlanned(s, Some(InputsEnded.Requested), newData = false)
    q.sourceStopped()
    q.completeEnd()
    assertEquals(Seq("start", "start", "wm 5", "eos"), out.sent.toSeq)
  }

  @Test def theWatermarkIsUndefinedWhileAnyIntermediateInputIs(): Unit = {
    val (a, b) = (new Source(Some(10)), new Source(None))
    assertEquals(None, query(a, b).producerWatermark())
    assertEquals(Some(10L), query(a, new Source(None, intermediate = false)).producerWatermark())
    assertEquals(None, query(new Source(None, intermediate = false)).producerWatermark())
    assertFalse(query(a, new Source(Some(1), stop = false)).stopOnEndOfStream)
  }
}
