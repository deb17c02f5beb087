package streamctl.spark

import scala.collection.mutable

import org.apache.spark.sql.streaming.StreamingQuery
import org.slf4j.LoggerFactory

import streamctl.StreamctlException

/**
 * In-band control of one run of one streaming query, on the driver: what its streamctl
 * sources say about their inputs and upstream watermark, and the control messages its
 * streamctl sinks send. Sources and sinks register themselves from the query's own thread
 * (see [[QueryControls.current]]), which is also where every batch event arrives.
 *
 * End-of-stream goes downstream once the query's inputs have ended and nothing is left to
 * write: every streamctl source found no new data and its inputs ended in the latest
 * planning round, and no batch has started since (a batch that only flushes state, such as
 * closing windows, would still write). It is sent when the query stops, from
 * [[sourceStopped]], on the query thread before `awaitTermination()` returns, or by
 * [[completeEnd]] after `streamctl.end_of_stream(query)` stopped it.
 *
 * {{{
 * val control = QueryControls.current()                 // in a source or sink, on the query thread
 * control.foreach(_.addSink(sender, endOfStreamAfterAvailableNow = true))
 * }}}
 */
final class QueryControl private[spark] (val queryId: String, private[spark] val thread: Thread) {
  import QueryControl._

  private val log = LoggerFactory.getLogger(classOf[QueryControl])

  private val sources = mutable.LinkedHashMap.empty[ControlSource, Option[InputsEnded]]
  private val sinks = mutable.ArrayBuffer.empty[(ControlSink, Boolean)]
  private var inFlight: Option[Long] = None
  private var endSent = false
  @volatile private var endWanted = false

  private lazy val query: Option[StreamingQuery] = QueryLookup.find(queryId)

  def addSource(source: ControlSource): Unit = synchronized(sources.update(source, None))

  /**
   * Registers a sink writing `stream` (once: Spark may build the sink's write more than once
   * per run). `endOfStreamAfterAvailableNow`: whether a finished `Trigger.AvailableNow` run
   * counts as the end of the stream.
   */
  def addSink(sender: ControlSink, endOfStreamAfterAvailableNow: Boolean): Unit = synchronized {
    if (!sinks.exists { case (s, _) => s.target == sender.target }) sinks += sender -> endOfStreamAfterAvailableNow
  }

  /** The producer name of a sink that names none: the query name, else its id (both survive restarts). */
  def defaultProducerName: String = query.flatMap(q => Option(q.name)).getOrElse(s"query-$queryId")

  /** `streamctl.end_of_stream(query)` asked: sources admit no more data from now on. */
  def endRequested: Boolean = endWanted

  def stopOnEndOfStream: Boolean = synchronized(sources.nonEmpty && sources.keys.forall(_.stopOnEndOfStream))

  /** A source planned a batch: `ended` when its inputs ended, `newData` when the batch reads something. */
  def sourcePlanned(source: ControlSource, ended: Option[InputsEnded], newData: Boolean): Unit =
    synchronized(sources.update(source, if (newData) None else ended))

  def batchStarted(epoch: Long): Unit = synchronized {
    inFlight = Some(epoch)
    sources.keys.foreach(sources.update(_, None))
  }

  /** The batch's writers committed: send the query's watermark downstream if it advanced. */
  def batchCommitted(epoch: Long): Unit = {
    synchronized { inFlight = None }
    producerWatermark(Some(epoch)).foreach(w => currentSinks.foreach(_._1.watermark(w)))
  }

  def batchAborted(epoch: Long): Unit = ()

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
  def sourceStopped(): Unit =
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
      if (!endWanted) QueryControls.forget(this)
    } catch {
      // Spark only logs a source's stop failure as a warning; say plainly what did not happen.
      case e: Exception =>
        log.error(s"Query $queryId: end-of-stream was NOT sent downstream: ${e.getMessage}", e)
    }

  /** After `streamctl.end_of_stream(query)` stopped the query: sends end-of-stream unless already sent. */
  def completeEnd(): Unit = {
    val pending = synchronized {
      if (endSent) false
      else inFlight match {
        case Some(epoch) => throw StreamctlException(
          s"Query $queryId stopped while batch $epoch was being written, so end-of-stream was not sent (data of that " +
            "batch may follow later); restart the query and call end_of_stream again")
        case None => true
      }
    }
    if (pending) sendEndOfStream(Set(InputsEnded.Requested))
  }

  private[spark] def requestEnd(): Unit = endWanted = true

  private def currentSinks: Seq[(ControlSink, Boolean)] = synchronized(sinks.toSeq)

  private def sendEndOfStream(reasons: Set[InputsEnded]): Unit = {
    // A sink may decline to treat a finished AvailableNow run as the end (runs repeated on a schedule).
    val availableNowOnly = reasons.contains(InputsEnded.AvailableNow) && !endWanted
    val targets = currentSinks.filter { case (_, afterAvailableNow) => !availableNowOnly || afterAvailableNow }
    val watermark = producerWatermark()
    targets.foreach { case (sender, _) =>
      watermark.foreach(sender.watermark)
      sender.endOfStream()
      log.info(s"Query $queryId: inputs ended (${reasons.mkString(", ")}); sent end-of-stream of producer " +
        s"'${sender.producer}' to every partition of stream '${sender.stream}'")
    }
    synchronized { endSent = true }
  }

  override def toString: String = s"QueryControl($queryId)"
}

object QueryControl {
  /** What a streamctl source tells the query's control. */
  trait ControlSource {
    def hasIntermediateStreams: Boolean
    /** The freshest watermark over the source's intermediate SSPs, if defined. */
    def upstreamWatermark: Option[Long]
    def stopOnEndOfStream: Boolean
  }
}

/** Why a source's inputs ended. */
sealed trait InputsEnded
object InputsEnded {
  /** Every SSP of the source is an intermediate SSP at end-of-stream. */
  case object EndOfStream extends InputsEnded { override def toString = "end-of-stream on every input SSP" }
  /** A `Trigger.AvailableNow` run read everything up to its target. */
  case object AvailableNow extends InputsEnded { override def toString = "Trigger.AvailableNow reached its target" }
  /** `streamctl.end_of_stream(query)`. */
  case object Requested extends InputsEnded { override def toString = "end_of_stream() was called" }
}

/**
 * The [[QueryControl]] of each running query, by query id. A restarted query runs on a new
 * thread and gets a fresh one.
 *
 * {{{
 * QueryControls.current()              // the control of the query running on this thread
 * QueryControls.requestEnd(queryId)    // from Python: streamctl.end_of_stream(query)
 * }}}
 */
object QueryControls {
  private val byQuery = new java.util.concurrent.ConcurrentHashMap[String, QueryControl]()

  /** The control of the query run on this thread; None outside a streaming query (batch writes, tests). */
  def current(): Option[QueryControl] = QueryLookup.currentQueryId.map { id =>
    val me = Thread.currentThread()
    byQuery.compute(id, (_, old) => if (old != null && (old.thread eq me)) old else new QueryControl(id, me))
  }

  def get(queryId: String): Option[QueryControl] = Option(byQuery.get(queryId))

  /** Sources of the query admit no new data from now on (they report their inputs ended). */
  def requestEnd(queryId: String): Unit = get(queryId).foreach(_.requestEnd())

  /** After the query stopped: sends end-of-stream downstream unless it went already; errors if it cannot. */
  def completeEnd(queryId: String): Unit = get(queryId).foreach { c =>
    try c.completeEnd() finally forget(c)
  }

  private[spark] def forget(control: QueryControl): Unit = byQuery.remove(control.queryId, control)
}
