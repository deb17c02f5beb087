package streamctl.control

import scala.collection.mutable

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.system.SSP

class RunControlTest {

  /** What the run's control knows about its query; the test sets it. */
  private final class FakeQuery extends RunControl.Query {
    var name: Option[String] = None

    /** None: no `withWatermark`. */
    var watermark: Option[Option[Long]] = None
    var failed = false
    var running = true
    var querySources: Option[Int] = None
    override def streamingSources: Option[Int] = querySources
    val asked = mutable.ArrayBuffer.empty[Option[Long]]
    override def eventTimeWatermark(running: Option[Long]): Option[Option[Long]] = {
      asked += running; watermark
    }
  }

  /** Records the calls a sink gets; `failing` makes its sends fail as a broker down would. */
  private final class Recorder(val stream: String) extends ControlSink {
    val calls = mutable.ArrayBuffer.empty[String]
    var failing = false
    override def producer = "q"
    override def target = ("servers", stream)
    override def batchStarted(): Unit = calls += "start"
    override def batchPartitionCount(): Int = 2
    override def batchCommitted(wroteData: Boolean, ts: Option[Long]): Unit =
      calls += s"commit $wroteData $ts"
    override def batchAborted(): Unit = calls += "abort"
    override def realTime(watermark: () => Option[Long]): Unit = calls += "real-time"
    override def endOfStream(ts: Option[Long]): Unit = {
      if (failing) throw StreamctlException(s"broker down: stream '$stream'")
      calls += s"eos $ts"
    }
    override def runFinished(): Unit = {
      if (failing) throw StreamctlException("broker down")
      calls += "run finished"
    }
    override def close(): Unit = calls += "close"
  }

  /**
   * A sink that decides with a real [[ProducerControl]] over a fake stream of 2 partitions and a
   * clock the test moves.
   */
  private final class ProducerSink(val stream: String, idleTimeoutMs: Long) extends ControlSink {
    var nowMs = 0L
    val received = mutable.ArrayBuffer.empty[String] // what partition 0 received
    private val control = new ProducerControl(
      ControlEncoder.forProducer("q", 1),
      Some(idleTimeoutMs),
      0,
      new ProducerControl.Wire {
        override def partitions(): Int = 2
        override def send(value: Array[Byte], partitions: Range, what: String): Unit =
          if (partitions.contains(0))
            received += (IntermediateMessage.decodeControl(SSP.kafka(stream, 0), 0, value) match {
              case WatermarkMessage(_, _, ts) => s"wm $ts"
              case _: EndOfStreamMessage => "eos"
              case IdleMessage(_, _, ts) => s"idle${ts.fold("")(t => s" $t")}"
              case ActiveMessage(_, _, ts) => s"active${ts.fold("")(t => s" $t")}"
            })
      }
    )
    override def producer = "q"
    override def target = ("servers", stream)
    override def batchStarted(): Unit = control.batchStarted()
    override def batchPartitionCount(): Int = control.batchPartitionCount()
    override def batchCommitted(wroteData: Boolean, ts: Option[Long]): Unit =
      control.batchCommitted(nowMs, wroteData, ts)
    override def batchAborted(): Unit = control.batchAborted()
    override def realTime(watermark: () => Option[Long]): Unit = ()
    override def endOfStream(ts: Option[Long]): Unit = control.endOfStream(ts)
    override def runFinished(): Unit = control.runFinished(nowMs)
    override def close(): Unit = ()

    /** What the sender's idle timer would do at `at`, if a check is due by then. */
    def timerAt(at: Long): Unit = {
      nowMs = at
      if (control.nextCheckMs.exists(_ <= at)) control.tick(at)
    }
  }

  private final class Source(
      var watermark: Option[Long],
      intermediate: Boolean = true,
      stop: Boolean = true
  ) extends ControlSource {
    override def hasIntermediateStreams: Boolean = intermediate
    override def upstreamWatermark: Option[Long] = watermark
    override def stopOnEndOfStream: Boolean = stop
  }

  private final class Run(sources: Source*) {
    val query = new FakeQuery
    var released = 0
    val control = new RunControl("q-1", query, () => released += 1)
    sources.foreach(control.addSource)
    def sink(stream: String, afterAvailableNow: Boolean = true): Recorder = {
      val s = new Recorder(stream)
      control.addSink(s.target, afterAvailableNow)(s)
      s
    }
    def ended(s: Source, why: InputsEnded = InputsEnded.EndOfStream): Unit =
      control.sourcePlanned(s, Some(why), newData = false)
  }

  @Test def aRunThatWritesNoBatchStillSendsEndOfStreamWhenItsInputsEnded(): Unit = {
    val s = new Source(Some(40))
    val run = new Run(s)
    val out = run.sink("mid")
    run.ended(s)
    run.control.sourceStopped()
    assertEquals(Seq("eos Some(40)"), out.calls.toSeq, "the upstream watermark goes with it")
    assertEquals(1, run.released, "nothing left to complete: the run lets go of its control")
    run.control.sourceStopped() // the query's other sources stop too
    assertEquals(Seq("eos Some(40)"), out.calls.toSeq, "at most once per run")
  }

  @Test def aQueryThatAlsoReadsAnotherKindOfSourceDoesNotEndByItsStreamctlInputs(): Unit = {
    val s = new Source(Some(40))
    val run = new Run(s)
    val out = run.sink("mid")
    run.query.querySources = Some(2) // and Spark's Kafka source, which may still have rows
    run.ended(s)
    run.control.sourceStopped()
    assertEquals(Seq(), out.calls.toSeq, "stopped, not ended")
  }

  @Test def nothingIsSentWhileASourceMayStillReadOrABatchWrites(): Unit = {
    val (a, b) = (new Source(Some(1)), new Source(Some(2)))
    val run = new Run(a, b)
    val out = run.sink("mid")
    run.control.sourceStopped()
    assertEquals(Seq(), out.calls.toSeq, "no source planned yet")
    run.ended(a)
    run.control.sourcePlanned(b, Some(InputsEnded.EndOfStream), newData = true)
    run.control.sourceStopped()
    assertEquals(Seq(), out.calls.toSeq, "b's last round still reads data")
    run.ended(b)
    run.control.batchStarted(4)
    run.control.sourceStopped()
    assertEquals(Seq("start"), out.calls.toSeq, "batch 4 is being written")
    run.control.batchCommitted(4, wroteData = false)
    run.control.sourceStopped()
    assertEquals(
      Seq("start", "commit false Some(1)"),
      out.calls.toSeq,
      "a batch may read what the sources planned before it: they must plan again"
    )
    run.control.batchStarted(5)
    run.ended(a) // the sources planned again while batch 5 ran, then its write failed
    run.ended(b)
    run.control.batchAborted(5)
    run.control.sourceStopped()
    assertEquals(
      "abort",
      out.calls.last,
      "a failed batch stays in flight: its retry may write again"
    )
    assertEquals(5, run.released, "each stop without an end request lets go of the control")
  }

  @Test def theWatermarkSentIsTheMinimumOverTheQueryAndItsIntermediateInputs(): Unit = {
    val (a, plain) = (new Source(Some(30)), new Source(None, intermediate = false))
    val run = new Run(a, plain)
    val out = run.sink("mid")
    run.query.watermark = Some(Some(25))
    run.control.batchStarted(9)
    run.control.batchCommitted(9, wroteData = true)
    assertEquals("commit true Some(25)", out.calls.last)
    assertEquals(
      Seq(Some(9L)),
      run.query.asked.toSeq,
      "at commit, the watermark Spark applies in that batch"
    )
    run.query.watermark = Some(None)
    assertEquals(None, run.control.producerWatermark(), "withWatermark not known yet: undefined")
    run.query.watermark = Some(Some(50))
    assertEquals(Some(30L), run.control.producerWatermark())
    a.watermark = None
    assertEquals(
      None,
      run.control.producerWatermark(),
      "an intermediate input without a watermark holds it undefined"
    )
    assertEquals(
      None,
      new Run(plain).control.producerWatermark(),
      "no intermediate input and no withWatermark"
    )
  }

  @Test def aFinishedAvailableNowRunEndsOnlyTheSinksThatCountItAsTheEnd(): Unit = {
    val s = new Source(None, intermediate = false)
    val run = new Run(s)
    val (ends, goesOn) = (run.sink("a"), run.sink("b", afterAvailableNow = false))
    goesOn.failing = true
    run.ended(s, InputsEnded.AvailableNow)
    run.control.sourceStopped()
    assertEquals(
      Seq("eos None"),
      ends.calls.toSeq,
      "a failing idle message does not hold the others' end back"
    )
    assertEquals(Seq(), goesOn.calls.toSeq)
    goesOn.failing = false

    val again = new Run(s)
    val (a, b) = (again.sink("a"), again.sink("b", afterAvailableNow = false))
    again.ended(s, InputsEnded.AvailableNow)
    again.control.sourceStopped()
    assertEquals(Seq("eos None"), a.calls.toSeq)
    assertEquals(Seq("run finished"), b.calls.toSeq, "the stream goes on: idle until the next run")
  }

  @Test def anEndRequestedEarlyEndsEverySinkOnceTheRunStops(): Unit = {
    val s = new Source(Some(7))
    val run = new Run(s)
    val (a, b) = (run.sink("a"), run.sink("b", afterAvailableNow = false))
    run.control.requestEnd()
    assertTrue(run.control.endRequested)
    run.ended(
      s,
      InputsEnded.AvailableNow
    ) // an AvailableNow run asked to end: not just this run's end
    run.control.sourceStopped()
    assertEquals(Seq("eos Some(7)"), a.calls.toSeq)
    assertEquals(Seq("eos Some(7)"), b.calls.toSeq, "an explicit end ends every sink")
    assertEquals(0, run.released, "the end request still has to complete")
    run.control.completeEnd()
    assertEquals(Seq("eos Some(7)"), b.calls.toSeq, "already sent")
  }

  @Test def anEndRequestedLateIsSentByCompleteEndAndRefusedMidBatch(): Unit = {
    val s = new Source(Some(3))
    val run = new Run(s)
    run.query.name = Some("by_user")
    val out = run.sink("mid")
    run.control.batchStarted(2)
    run.control.requestEnd() // while batch 2 runs; the query stops before it commits
    val e = assertThrows(classOf[StreamctlException], () => run.control.completeEnd())
    assertTrue(
      e.getMessage.contains("'by_user' (q-1)") && e.getMessage.contains("batch 2"),
      e.getMessage
    )
    run.control.batchCommitted(2, wroteData = true)
    run.control.sourceStopped()
    assertEquals(
      Seq("start", "commit true Some(3)"),
      out.calls.toSeq,
      "the sources did not plan again after batch 2"
    )
    run.control.completeEnd()
    assertEquals(
      "eos Some(3)",
      out.calls.last,
      "sent for the request, whatever the sources last said"
    )
  }

  @Test def anEndThatCannotBeSentSaysWhy(): Unit = {
    val run = new Run(new Source(None))
    run.control.requestEnd()
    run.control.sinkUnusable("option 'stream' is missing")
    val e = assertThrows(classOf[StreamctlException], () => run.control.completeEnd())
    assertTrue(
      e.getMessage.contains("could not be set up: option 'stream' is missing"),
      e.getMessage
    )

    val out = run.sink("mid") // a sink found later replaces the unknown one
    out.failing = true
    val failed = assertThrows(classOf[StreamctlException], () => run.control.completeEnd())
    assertTrue(
      failed.getMessage.contains("end-of-stream was not sent: broker down: stream 'mid'"),
      failed.getMessage
    )
    out.failing = false
    run.control.completeEnd()
    assertEquals(Seq("eos None"), out.calls.toSeq, "a failed send is attempted again")
  }

  @Test def aFailedQueryOrAFailedSendEndsNothingAtStop(): Unit = {
    val s = new Source(Some(1))
    val failedQuery = new Run(s)
    val out = failedQuery.sink("mid")
    failedQuery.query.failed = true
    failedQuery.ended(s)
    failedQuery.control.sourceStopped()
    assertEquals(Seq(), out.calls.toSeq, "a failed query may have more to write once restarted")
    assertEquals(1, failedQuery.released)

    val brokerDown = new Run(s)
    val down = brokerDown.sink("mid")
    down.failing = true
    brokerDown.ended(s)
    brokerDown.control.sourceStopped() // logged, not thrown: Spark would only warn
    assertEquals(0, brokerDown.released, "not forgotten: the end was not sent")
    down.failing = false
    brokerDown.control.sourceStopped()
    assertEquals(Seq("eos Some(1)"), down.calls.toSeq, "nothing was marked sent")
  }

  @Test def oneSinkPerTargetBuiltOnceAndClosedWithTheRun(): Unit = {
    val run = new Run()
    val out = run.sink("mid")
    var built = 0
    run.control.addSink(out.target, endOfStreamAfterAvailableNow = false) {
      built += 1; new Recorder("mid")
    }
    assertEquals(0, built, "Spark builds the sink's write at every batch: the sink is made once")
    run.control.batchStarted(1)
    run.control.close()
    assertEquals(Seq("start", "close"), out.calls.toSeq)
  }

  @Test def theQueryStopsByItselfOnlyWhenEveryOneOfItsSourcesIsAtEndOfStream(): Unit = {
    val (a, b) = (new Source(None), new Source(None))
    val run = new Run(a, b)
    assertFalse(run.control.endOfStreamReached(2))
    run.control.sourceAtEndOfStream(a, atEnd = true)
    run.control.sourceAtEndOfStream(b, atEnd = true)
    assertTrue(run.control.endOfStreamReached(2))
    assertFalse(run.control.endOfStreamReached(3), "Spark counts a source that is not streamctl's")
    run.control.sourceAtEndOfStream(b, atEnd = false)
    assertFalse(run.control.endOfStreamReached(2), "b's inputs are no longer all at end-of-stream")
    val keepsRunning = new Run(a, new Source(None, stop = false))
    keepsRunning.control.sourceAtEndOfStream(a, atEnd = true)
    assertFalse(keepsRunning.control.stopOnEndOfStream)
    assertFalse(new Run().control.endOfStreamReached(0), "a query with no streamctl source")
  }

  @Test def aRunRestartedAtTheEndStopsOnWhatItsPlanningFoundNotOnABatchReport(): Unit = {
    val (a, b) = (new Source(None), new Source(None))
    val run = new Run(a, b)
    run.control.sourcePlanned(a, Some(InputsEnded.EndOfStream), newData = false)
    assertFalse(run.control.endOfStreamReached(2), "b planned nothing yet")
    run.control.sourcePlanned(b, Some(InputsEnded.EndOfStream), newData = false)
    assertTrue(
      run.control.endOfStreamReached(2),
      "nothing new to read after end-of-stream everywhere"
    )
    run.control.sourcePlanned(b, Some(InputsEnded.EndOfStream), newData = true)
    assertFalse(run.control.endOfStreamReached(2), "b has a batch to run first")
    run.control.sourcePlanned(b, Some(InputsEnded.AvailableNow), newData = false)
    assertFalse(run.control.endOfStreamReached(2), "an Available-now target is not end-of-stream")
  }

  @Test def aScheduledAvailableNowRunSaysIdleAsItFinishesNotAfterTheTimeout(): Unit = {
    val s = new Source(None, intermediate = false)
    val run = new Run(s)
    run.query.watermark = Some(Some(500))
    val (ends, goesOn) =
      (new ProducerSink("a", idleTimeoutMs = 1000), new ProducerSink("b", idleTimeoutMs = 1000))
    run.control.addSink(ends.target, endOfStreamAfterAvailableNow = true)(ends)
    run.control.addSink(goesOn.target, endOfStreamAfterAvailableNow = false)(goesOn)
    run.control.batchStarted(0)
    ends.nowMs = 100; goesOn.nowMs = 100
    run.control.batchCommitted(0, wroteData = true)
    assertEquals(
      Seq("active", "wm 500"),
      goesOn.received.toSeq,
      "a new run may follow one readers count idle"
    )
    run.ended(s, InputsEnded.AvailableNow)
    goesOn.nowMs = 200
    run.control.sourceStopped()
    assertEquals(
      Seq("active", "wm 500", "idle 500"),
      goesOn.received.toSeq,
      "idle at once, with its watermark"
    )
    assertEquals(Seq("active", "wm 500", "eos"), ends.received.toSeq)
    goesOn.timerAt(5000)
    assertEquals("idle 500", goesOn.received.last, "the timer has nothing more to say")
  }

  @Test def anIdleRunThatNeverWroteEndsAfterItsIdleMessage(): Unit = {
    val s = new Source(Some(60))
    val run = new Run(s)
    val out = new ProducerSink("mid", idleTimeoutMs = 1000)
    run.control.addSink(out.target, endOfStreamAfterAvailableNow = true)(out)
    out.timerAt(1000)
    assertEquals(Seq("idle"), out.received.toSeq, "no batch in the timeout: idle, no watermark yet")
    run.ended(s)
    run.control.sourceStopped()
    assertEquals(Seq("idle", "wm 60", "eos"), out.received.toSeq)
  }
}
