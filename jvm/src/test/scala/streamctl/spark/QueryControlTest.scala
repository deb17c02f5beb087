package streamctl.spark

import scala.collection.mutable

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException

class QueryControlTest {
  /** Records what would go to Kafka; the real sender is exercised by the Python tests on a broker. */
  private final class Recorder(val stream: String) extends ControlSink {
    val sent = mutable.ArrayBuffer.empty[String]
    private var last = Long.MinValue
    override def producer = "q"
    override def target = ("servers", stream)
    override def watermark(ts: Long): Boolean = if (ts > last) { last = ts; sent += s"wm $ts"; true } else false
    override def endOfStream(): Unit = sent += "eos"
  }

  private final class Source(var watermark: Option[Long], intermediate: Boolean = true, stop: Boolean = true)
    extends QueryControl.ControlSource {
    override def hasIntermediateStreams: Boolean = intermediate
    override def upstreamWatermark: Option[Long] = watermark
    override def stopOnEndOfStream: Boolean = stop
  }

  private def query(sources: Source*): QueryControl = {
    val q = new QueryControl("not-a-running-query", Thread.currentThread())
    sources.foreach(q.addSource)
    q
  }

  @Test def endOfStreamOnlyOnceEverySourceEndedIdleAndNoBatchIsInFlight(): Unit = {
    val (a, b) = (new Source(Some(10)), new Source(Some(20)))
    val q = query(a, b)
    val out = new Recorder("mid")
    q.addSink(out, endOfStreamAfterAvailableNow = true)
    q.addSink(new Recorder("mid"), endOfStreamAfterAvailableNow = true) // the same sink built twice

    q.sourcePlanned(a, Some(InputsEnded.EndOfStream), newData = false)
    q.sourceStopped()
    assertEquals(Seq(), out.sent.toSeq, "source b has not ended")

    q.sourcePlanned(b, Some(InputsEnded.EndOfStream), newData = false)
    q.batchStarted(7) // a batch that only closes windows still writes
    q.sourceStopped()
    assertEquals(Seq(), out.sent.toSeq)

    q.batchCommitted(7)
    assertEquals(Seq("wm 10"), out.sent.toSeq, "after a batch: the minimum over the inputs")
    q.sourcePlanned(a, Some(InputsEnded.EndOfStream), newData = false)
    q.sourcePlanned(b, Some(InputsEnded.EndOfStream), newData = false)
    a.watermark = Some(15)
    q.sourceStopped()
    q.sourceStopped() // every source of the query calls it
    assertEquals(Seq("wm 10", "wm 15", "eos"), out.sent.toSeq)
  }

  @Test def aFinishedAvailableNowRunEndsOnlySinksThatAgree(): Unit = {
    val s = new Source(None, intermediate = false)
    val q = query(s)
    val (ends, keepsOpen) = (new Recorder("a"), new Recorder("b"))
    q.addSink(ends, endOfStreamAfterAvailableNow = true)
    q.addSink(keepsOpen, endOfStreamAfterAvailableNow = false)
    q.sourcePlanned(s, Some(InputsEnded.AvailableNow), newData = true)
    q.sourceStopped()
    assertEquals(Seq(), ends.sent.toSeq, "new data: the target is not reached yet")
    q.sourcePlanned(s, Some(InputsEnded.AvailableNow), newData = false)
    q.sourceStopped()
    assertEquals(Seq("eos"), ends.sent.toSeq, "no intermediate input and no withWatermark: no watermark")
    assertEquals(Seq(), keepsOpen.sent.toSeq)
  }

  @Test def anExplicitEndIsSentOnceAndRefusedMidBatch(): Unit = {
    val s = new Source(Some(5))
    val q = query(s)
    val out = new Recorder("mid")
    q.addSink(out, endOfStreamAfterAvailableNow = false)
    q.requestEnd()
    assertTrue(q.endRequested)
    q.batchStarted(3)
    val e = assertThrows(classOf[StreamctlException], () => q.completeEnd())
    assertTrue(e.getMessage.contains("batch 3"), e.getMessage)
    q.batchCommitted(3)
    q.sourcePlanned(s, Some(InputsEnded.Requested), newData = false)
    q.sourceStopped()
    q.completeEnd()
    assertEquals(Seq("wm 5", "eos"), out.sent.toSeq)
  }

  @Test def theWatermarkIsUndefinedWhileAnyIntermediateInputIs(): Unit = {
    val (a, b) = (new Source(Some(10)), new Source(None))
    assertEquals(None, query(a, b).producerWatermark())
    assertEquals(Some(10L), query(a, new Source(None, intermediate = false)).producerWatermark())
    assertEquals(None, query(new Source(None, intermediate = false)).producerWatermark())
    assertFalse(query(a, new Source(Some(1), stop = false)).stopOnEndOfStream)
  }
}
