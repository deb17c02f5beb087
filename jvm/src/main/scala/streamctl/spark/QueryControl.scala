package streamctl.spark

import scala.collection.mutable

import org.apache.spark.sql.streaming.StreamingQuery
import org.apache.spark.streamctl.SparkQuerySink
import org.slf4j.LoggerFactory

import streamctl.StreamctlException
import streamctl.control.{ControlMessageSender, ControlSink, ControlSource, ControlledQuery, InputsEnded, SinkOptions}

/**
 * In-band control of one run of one streaming query, on the driver: what its streamctl
 * sources say about their inputs and upstream watermark, and the control messages its
 * streamctl sink sends. It exists from the run's start: the query listener creates it when
 * the query starts (on the query's own thread, before any source or batch), and so does the
 * first streamctl source or sink that asks ([[QueryControlRegistry.current]]). At creation it finds
 * the query's sink (`writeStream.format("streamctl")`, through [[org.apache.spark.streamctl.SparkQuerySink]])
 * so that a run that executes no batch still knows where its end-of-stream goes.
 *
 * End-of-stream goes downstream once the query's inputs have ended and nothing is left to
 * write: every streamctl source found no new data and its inputs ended in the latest
 * planning round, and no batch has started since (a batch that only flushes state, such as
 * closing windows, would still write). It is sent when the query stops, from
 * [[sourceStopped]], on the query thread before `awaitTermination()` returns, or by
 * [[completeEnd]] after `streamctl.end_of_stream(query)` stopped it.
 *
 * {{{
 * val control = QueryControlRegistry.current()          // in a source or sink, on the query thread
 * control.foreach(_.addSource(this))
 * }}}
 */
final class QueryControl private[spark] (
    val queryId: String,
    /** The run this control belongs to, when known. */
    val runId: Option[String],
    private[spark] val thread: Thread,
    lookup: => Option[StreamingQuery]) extends ControlledQuery {

  private val log = LoggerFactory.getLogger(classOf[QueryControl])

  private val sources = mutable.LinkedHashMap.empty[ControlSource, Option[InputsEnded]]
  private val atEndOfStream = mutable.Set.empty[ControlSource]
  private val sinks = mutable.ArrayBuffer.empty[(ControlSink, Boolean)]
  private var inFlight: Option[Long] = None
  private var endSent = false
  @volatile private var endWanted = false
  @volatile private var sinkUnknown: Option[String] = None

  private lazy val query: Option[StreamingQuery] = lookup

  /** Registers the query's own streamctl sink, found from the query itself; see [[SparkQuerySink]]. */
  private[spark] def findSink(): Unit =
    query.flatMap(SparkQuerySink.of) match {
      case Some(t: StreamctlTable) =>
        try addSinkFor(t.options)
        catch {
          // The sink's write reports bad options when it is built; here they only mean "unknown sink".
          case e: StreamctlException => sinkUnknown = Some(e.getMessage)
        }
      case _ =>
    }

  override def addSource(source: ControlSource): Unit = synchronized(sources.update(source, None))

  /**
   * Makes this query send the control messages of the sink with these `writeStream` options
   * (once per stream: Spark builds a sink's write at every batch).
   */
  def addSinkFor(raw: Map[String, String]): Unit = {
    val options = SinkOptions(raw)
    addSink((options.kafka.bootstrapServers, options.stream), options.endOfStreamAfterAvailableNow) {
      new ControlMessageSender(options.kafka, options.stream, () => options.producerName.getOrElse(defaultProducerName),
        options.producerCount, options.idleTimeoutMs, () => running)
    }
  }

  /**
   * Registers the sink writing `target` (servers, stream) once: Spark builds the sink's write at
   * every batch. `endOfStreamAfterAvailableNow`: whether a finished `Trigger.AvailableNow` run
   * counts as the end of the stream.
   */
  def addSink(target: (String, String), endOfStreamAfterAvailableNow: Boolean)(make: => ControlSink): Unit = {
    val added = synchronized {
      if (sinks.exists { case (s, _) => s.target == target }) None
      else {
        val sink = make
        sinks += sink -> endOfStreamAfterAvailableNow
        sinkUnknown = None
        Some(sink)
      }
    }
    added.foreach {
      case s: ControlMessageSender => s.start()
      case _ =>
    }
  }

  /** The producer name of a sink that names none: the query name, else its id (both survive restarts). */
  def defaultProducerName: String = query.flatMap(q => Option(q.name)).getOrElse(s"query-$queryId")

  /** `streamctl.end_of_stream(query)` asked: sources admit no more data from now on. */
  override def endRequested: Boolean = endWanted

  /** The run is still going: its query is active and this is its run. */
  def running: Boolean = query.exists(q => q.isActive && runId.forall(_ == q.runId.toString))

  def stopOnEndOfStream: Boolean = synchronized(sources.nonEmpty && sources.keys.forall(_.stopOnEndOfStream))

  override def sourcePlanned(source: ControlSource, ended: Option[InputsEnded], newData: Boolean): Unit =
    synchronized(sources.update(source, if (newData) None else ended))

  override def sourceAtEndOfStream(source: ControlSource, atEnd: Boolean): Unit =
    synchronized(if (atEnd) atEndOfStream += source else atEndOfStream -= source)

  /**
   * The query should stop by itself: it wants to stop at end-of-stream, its `querySources`
   * sources (as many as Spark reports) are all streamctl sources, and each one's inputs are all
   * at end-of-stream after the batch it last reported on.
   */
  def endOfStreamReached(querySources: Int): Boolean = synchronized {
    stopOnEndOfStream && sources.size == querySources && sources.keys.forall(atEndOfStream.contains)
  }

  /** A batch is about to write: sinks coming back from idle say so before the writers start. */
  def batchStarted(epoch: Long): Unit = {
    synchronized {
      inFlight = Some(epoch)
      sources.keys.foreach(sources.update(_, None))
    }
    currentSinks.foreach(_._1.batchStarted())
  }

  /** The batch's writers committed: send the query's watermark downstream if it advanced. */
  def batchCommitted(epoch: Long, wroteData: Boolean): Unit = {
    synchronized { inFlight = None }
    val watermark = producerWatermark(Some(epoch))
    currentSinks.foreach(_._1.batchCommitted(wroteData, watermark))
  }

  /**
   * The batch's write failed or was cancelled. It still counts as in flight here: some of its
   * data may be written and will be written again when it is retried, so no end-of-stream may
   * go out before that.
   */
  def batchAborted(epoch: Long): Unit = currentSinks.foreach(_._1.batchAborted())

  /**
   * The watermark this query sends downstream: the minimum over its own event-time
   * watermark (when it has `withWatermark`) and the upstream watermark of its intermediate
   * inputs; undefined while any of those is. `running`: the batch being committed, whose own
   * watermark Spark already applies (its progress report comes only after the commit).
   */
  def producerWatermark(running: Option[Long] = None): Option[Long] = {
    val upstream = synchronized(sources.keys.filter(_.hasIntermediateStreams).toSeq).map(_.upstreamWatermark)
    val own = query.flatMap(QueryLookup.sparkWatermark(_, running)).toSeq
    val parts = upstream ++ own
    if (parts.isEmpty || parts.exists(_.isEmpty)) None else Some(parts.flatten.min)
  }

  /** Called by each streamctl source as the query stops, on its thread. */
  override def sourceStopped(): Unit =
    try {
      val reasons = synchronized {
        if (endSent || inFlight.isDefined || sources.isEmpty || sources.values.exists(_.isEmpty)) None
        else Some(sources.values.flatten.toSet)
      }
      reasons.foreach { r =>
        // A query that failed may still have something to write once restarted.
        if (query.exists(_.exception.isDefined)) log.warn(s"Query $queryId failed; end-of-stream not sent")
        else sendEndOfStream(r)
      }
      if (!endWanted) QueryControlRegistry.forget(this)
    } catch {
      // Spark only logs a source's stop failure as a warning; say plainly what did not happen.
      case e: Exception =>
        log.error(s"Query $queryId: end-of-stream was NOT sent downstream: ${e.getMessage}", e)
    }

  /**
   * After `streamctl.end_of_stream(query)` stopped the query: sends end-of-stream unless already
   * sent; an error saying why when it cannot.
   */
  def completeEnd(): Unit = {
    val pending = synchronized {
      if (endSent) false
      else inFlight match {
        case Some(epoch) => throw StreamctlException(
          s"Query $describe stopped while batch $epoch was being written, so end-of-stream was not sent (data of that " +
            "batch may follow later); restart the query and call end_of_stream again")
        case None => true
      }
    }
    if (pending) {
      sinkUnknown.foreach { why =>
        throw StreamctlException(s"Query $describe: end-of-stream was not sent: its streamctl sink could not be set up: $why")
      }
      try sendEndOfStream(Set(InputsEnded.Requested))
      catch {
        case e: StreamctlException => throw StreamctlException(s"Query $describe: end-of-stream was not sent: ${e.getMessage}", e)
      }
    }
  }

  private[spark] def requestEnd(): Unit = endWanted = true

  /** The run is over: idle checks stop, connections close. */
  private[spark] def close(): Unit = currentSinks.foreach(_._1.close())

  private def currentSinks: Seq[(ControlSink, Boolean)] = synchronized(sinks.toSeq)

  private def describe: String = query.flatMap(q => Option(q.name)).fold(queryId)(n => s"'$n' ($queryId)")

  private def sendEndOfStream(reasons: Set[InputsEnded]): Unit = {
    // A sink may decline to treat a finished AvailableNow run as the end (runs repeated on a schedule).
    val availableNowOnly = reasons.contains(InputsEnded.AvailableNow) && !endWanted
    val (targets, goingOn) = currentSinks.partition { case (_, afterAvailableNow) =>
      !availableNowOnly || afterAvailableNow
    }
    val watermark = producerWatermark()
    goingOn.foreach { case (sink, _) =>
      try sink.runFinished()
      catch {
        case e: Exception => log.warn(s"Query $queryId: could not tell readers of stream '${sink.stream}' that it is idle " +
          s"until its next run: ${e.getMessage}")
      }
    }
    targets.foreach { case (sender, _) =>
      sender.endOfStream(watermark)
      log.info(s"Query $queryId: inputs ended (${reasons.mkString(", ")}); sent end-of-stream of producer " +
        s"'${sender.producer}' to every partition of stream '${sender.stream}'")
    }
    synchronized { endSent = true }
  }

  override def toString: String = s"QueryControl($queryId${runId.fold("")(r => s", run $r")})"
}

/**
 * The [[QueryControl]] of each running query, by query id. A restarted query runs on a new
 * thread and gets a fresh one (the previous run's is closed).
 *
 * An end request that arrives before the run's control exists (right after `start()`, while
 * Spark is still setting the query up) is kept for that run and taken up by its control when
 * it is created, so `end_of_stream` takes effect whenever it is called.
 *
 * {{{
 * QueryControlRegistry.current()              // the control of the query running on this thread
 * QueryControlRegistry.requestEnd(queryId, runId)    // from Python: streamctl.end_of_stream(query)
 * QueryControlRegistry.completeEnd(queryId, runId)   // ... after it stopped
 * }}}
 */
object QueryControlRegistry {
  private val byQuery = new java.util.concurrent.ConcurrentHashMap[String, QueryControl]()
  /** Query id -> run id of end requests no control has taken up yet. */
  private val pendingEnds = mutable.HashMap.empty[String, String]
  /** Run id -> query handle of end requests not completed yet: completing one needs it after the query stopped. */
  private val endHandles = mutable.HashMap.empty[String, StreamingQuery]

  /** The control of the query run on this thread; None outside a streaming query (batch writes, tests). */
  def current(): Option[QueryControl] = QueryLookup.currentQueryId.map { id =>
    lazy val query = QueryLookup.find(id)
    val (control, created) = forThread(id, query.map(_.runId.toString), query)
    if (created) control.findSink()
    control
  }

  /**
   * The control of run `runId` of query `queryId` on this thread, created (and given a pending
   * end request) if this thread has none yet; true when created.
   */
  private[spark] def forThread(queryId: String, runId: Option[String],
                               query: => Option[StreamingQuery]): (QueryControl, Boolean) = {
    val me = Thread.currentThread()
    val (control, replaced) = synchronized {
      Option(byQuery.get(queryId)).filter(_.thread eq me) match {
        case Some(c) => (c, None)
        case None =>
          val c = new QueryControl(queryId, runId, me, query)
          val previous = Option(byQuery.put(queryId, c))
          if (pendingEnds.get(queryId).exists(r => runId.forall(_ == r))) {
            pendingEnds.remove(queryId)
            c.requestEnd()
          }
          (c, Some(previous))
      }
    }
    replaced.flatten.foreach(_.close()) // the previous run's, outside the lock: closing waits for Kafka clients
    (control, replaced.isDefined)
  }

  /**
   * From the query listener as query `queryId` starts (Spark calls it on the query's own thread,
   * before any source exists): a query writing a streamctl sink gets its control now.
   */
  def queryStarted(queryId: String): Unit =
    if (QueryLookup.currentQueryId.contains(queryId) &&
      QueryLookup.find(queryId).flatMap(SparkQuerySink.of).exists(_.isInstanceOf[StreamctlTable])) current()

  def get(queryId: String): Option[QueryControl] = Option(byQuery.get(queryId))

  /** Sources of run `runId` of query `queryId` admit no new data from now on (they report their inputs ended). */
  def requestEnd(queryId: String, runId: String): Unit = synchronized {
    QueryLookup.find(queryId).filter(_.runId.toString == runId).foreach(endHandles.update(runId, _))
    get(queryId).filter(_.runId.forall(_ == runId)) match {
      case Some(c) => c.requestEnd()
      case None => pendingEnds.update(queryId, runId)
    }
  }

  /**
   * After the query stopped: sends end-of-stream downstream unless it went already; an error
   * naming the query and the reason if it cannot. A run that never set up its control (no
   * query listener, no streamctl source and no batch) is controlled from the query handle.
   */
  def completeEnd(queryId: String, runId: String): Unit = {
    val control = synchronized {
      if (pendingEnds.get(queryId).contains(runId)) pendingEnds.remove(queryId)
      val handle = endHandles.remove(runId)
      get(queryId).filter(_.runId.forall(_ == runId)).getOrElse {
        val query = handle.getOrElse(throw StreamctlException(s"Query $queryId: end-of-stream was not sent: run $runId " +
          "was never seen running here; call end_of_stream while the query runs"))
        val c = new QueryControl(queryId, Some(runId), null, Some(query))
        c.requestEnd()
        c.findSink()
        c
      }
    }
    try control.completeEnd() finally forget(control)
  }

  /** From the query listener: the run ended; its idle checks stop (an end request still completes). */
  def queryTerminated(queryId: String, runId: String): Unit = get(queryId).filter(_.runId.forall(_ == runId)).foreach { c =>
    c.close()
    if (!c.endRequested) forget(c)
  }

  private[spark] def forget(control: QueryControl): Unit = {
    control.close()
    byQuery.remove(control.queryId, control)
  }
}
