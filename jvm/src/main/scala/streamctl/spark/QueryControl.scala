package streamctl.spark

import scala.collection.mutable

import org.apache.spark.sql.streaming.StreamingQuery
import org.apache.spark.streamctl.{SparkQueries, SparkQuerySink}

import streamctl.StreamctlException
import streamctl.control.{RunControl, SinkOptions}
import streamctl.ops.BatchSummary

/**
 * In-band control of one run of one streaming query, on the driver, as Spark sees it: finds the
 * query, its name, its event-time watermark, whether it failed or still runs, and its sink, and
 * hands them to [[run]], the [[streamctl.control.RunControl]] that decides when the query's
 * watermark and end-of-stream go downstream (and when the query may stop by itself). Sources, sinks
 * and the listener call [[run]] directly; nothing here decides.
 *
 * It exists from the run's start: the query listener creates it when the query starts (on the
 * query's own thread, before any source or batch), and so does the first streamctl source or sink
 * that asks ([[QueryControlRegistry.current]]). At creation it finds the query's sink
 * (`writeStream.format("streamctl")`, through [[org.apache.spark.streamctl.SparkQuerySink]]) so
 * that a run that executes no batch still knows where its end-of-stream goes.
 *
 * {{{
 * val control = QueryControlRegistry.current()          // in a source or sink, on the query thread
 * control.foreach(_.run.batchStarted(epoch))
 * }}}
 */
final class QueryControl private[spark] (
    val queryId: String,
    /** The run this control belongs to, when known. */
    val runId: Option[String],
    private[spark] val thread: Thread,
    lookup: => Option[StreamingQuery]
) {

  private lazy val query: Option[StreamingQuery] = lookup

  /** The decisions of this run's in-band control. */
  val run: RunControl = new RunControl(
    queryId,
    new RunControl.Query {
      override def name: Option[String] = query.flatMap(q => Option(q.name))
      override def eventTimeWatermark(running: Option[Long]): Option[Option[Long]] =
        query.flatMap(QueryLookup.sparkWatermark(_, running))
      override def failed: Boolean = query.exists(_.exception.isDefined)
      override def running: Boolean =
        query.exists(q => q.isActive && runId.forall(_ == q.runId.toString))
      override def streamingSources: Option[Int] = query.flatMap(SparkQueries.streamingSources)
    },
    release = () => QueryControlRegistry.forget(this)
  )

  // Per streamctl source of this run (its progress description): where its batch summaries go.
  private val recorders = mutable.ArrayBuffer.empty[(String, BatchSummary => Unit)]

  /**
   * The source described as `description` in progress reports keeps its batches with `record`,
   * called on Spark's listener thread, which serves every query: it must return at once.
   */
  def addProgressRecorder(description: String, record: BatchSummary => Unit): Unit =
    synchronized(recorders += description -> record)

  /** The recorders of sources described as `description`, in the order the sources were created. */
  def progressRecorders(description: String): Seq[BatchSummary => Unit] =
    synchronized(recorders.collect { case (d, r) if d == description => r }.toSeq)

  /**
   * Registers the query's own streamctl sink, found from the query itself; see [[SparkQuerySink]].
   */
  private[spark] def findSink(): Unit =
    query.flatMap(SparkQuerySink.of) match {
      case Some(t: StreamctlTable) =>
        try run.addSinkFor(SinkOptions(t.options))
        catch {
          /* The sink's write reports bad options when it is built; here they only mean "unknown
           * sink". */
          case e: StreamctlException => run.sinkUnusable(e.getMessage)
        }
      case _ =>
    }

  override def toString: String = s"QueryControl($queryId${runId.fold("")(r => s", run $r")})"
}

/**
 * The [[QueryControl]] of each running query, by query id. A restarted query runs on a new thread
 * and gets a fresh one (the previous run's is closed).
 *
 * An end request that arrives before the run's control exists (right after `start()`, while Spark
 * is still setting the query up) is kept for that run and taken up by its control when it is
 * created, so `end_of_stream` takes effect whenever it is called.
 *
 * {{{
 * QueryControlRegistry.current()              // the control of the query running on this thread
 * QueryControlRegistry.requestEnd(queryId, runId)    // from Python: streamctl.end_of_stream(query)
 * QueryControlRegistry.completeEnd(queryId, runId)   // ... after it stopped
 * }}}
 */
object QueryControlRegistry {
  private val byQuery = new java.util.concurrent.ConcurrentHashMap[String, QueryControl]()

  /* Run id -> the run's control until the listener hears the run terminated. The sources stop, and
   * release the control, before Spark's listener bus has delivered the run's last progress reports:
   * the last batch's summary must still find its sources' recorders. */
  private val byRun = new java.util.concurrent.ConcurrentHashMap[String, QueryControl]()

  /** Query id -> run id of end requests no control has taken up yet. */
  private val pendingEnds = mutable.HashMap.empty[String, String]

  /**
   * Run id -> query handle of end requests not completed yet: completing one needs it after the
   * query stopped.
   */
  private val endHandles = mutable.HashMap.empty[String, StreamingQuery]

  /**
   * The control of the query run on this thread; None outside a streaming query (batch writes,
   * tests).
   */
  def current(): Option[QueryControl] = QueryLookup.currentQueryId.map { id =>
    lazy val query = QueryLookup.find(id)
    val (control, created) = forThread(id, query.map(_.runId.toString), query)
    if (created) control.findSink()
    control
  }

  /**
   * The control of run `runId` of query `queryId` on this thread, created (and given a pending end
   * request) if this thread has none yet; true when created.
   */
  private[spark] def forThread(
      queryId: String,
      runId: Option[String],
      query: => Option[StreamingQuery]
  ): (QueryControl, Boolean) = {
    val me = Thread.currentThread()
    val (control, replaced) = synchronized {
      Option(byQuery.get(queryId)).filter(_.thread eq me) match {
        case Some(c) => (c, None)
        case None =>
          val c = new QueryControl(queryId, runId, me, query)
          val previous = Option(byQuery.put(queryId, c))
          runId.foreach(byRun.put(_, c))
          if (pendingEnds.get(queryId).exists(r => runId.forall(_ == r))) {
            pendingEnds.remove(queryId)
            c.run.requestEnd()
          }
          (c, Some(previous))
      }
    }
    replaced.flatten.foreach(
      _.run.close()
    ) // the previous run's, outside the lock: closing waits for Kafka clients
    (control, replaced.isDefined)
  }

  /**
   * From the query listener as query `queryId` starts (Spark calls it on the query's own thread,
   * before any source exists): a query writing a streamctl sink gets its control now.
   */
  def queryStarted(queryId: String): Unit =
    if (
      QueryLookup.currentQueryId.contains(queryId) &&
      QueryLookup.find(queryId).flatMap(SparkQuerySink.of).exists(_.isInstanceOf[StreamctlTable])
    ) current()

  def get(queryId: String): Option[QueryControl] = Option(byQuery.get(queryId))

  /**
   * The control of run `runId` of query `queryId` for its progress reports: also after its sources
   * stopped, until [[queryTerminated]].
   */
  def forProgress(queryId: String, runId: String): Option[QueryControl] =
    Option(byRun.get(runId)).orElse(get(queryId).filter(_.runId.isEmpty))

  /**
   * Sources of run `runId` of query `queryId` admit no new data from now on (they report their
   * inputs ended).
   */
  def requestEnd(queryId: String, runId: String): Unit = synchronized {
    QueryLookup.find(queryId).filter(_.runId.toString == runId).foreach(endHandles.update(runId, _))
    get(queryId).filter(_.runId.forall(_ == runId)) match {
      case Some(c) => c.run.requestEnd()
      case None => pendingEnds.update(queryId, runId)
    }
  }

  /**
   * After the query stopped: sends end-of-stream downstream unless it went already; an error naming
   * the query and the reason if it cannot. A run that never set up its control (no query listener,
   * no streamctl source and no batch) is controlled from the query handle.
   */
  def completeEnd(queryId: String, runId: String): Unit = {
    val control = synchronized {
      if (pendingEnds.get(queryId).contains(runId)) pendingEnds.remove(queryId)
      val handle = endHandles.remove(runId)
      get(queryId).filter(_.runId.forall(_ == runId)).getOrElse {
        val query = handle.getOrElse(
          throw StreamctlException(s"Query $queryId: end-of-stream was not sent: run $runId " +
            "was never seen running here; call end_of_stream while the query runs")
        )
        val c = new QueryControl(queryId, Some(runId), null, Some(query))
        c.run.requestEnd()
        c.findSink()
        c
      }
    }
    try control.run.completeEnd()
    finally forget(control)
  }

  /**
   * An end request that will not be completed (the query failed while finishing): what it kept
   * goes, and so does the run's control once the run is over (its termination kept it for the
   * request).
   */
  def abandonEnd(queryId: String, runId: String): Unit = {
    val over = synchronized {
      if (pendingEnds.get(queryId).contains(runId)) pendingEnds.remove(queryId)
      endHandles.remove(runId)
      get(queryId).filter(c =>
        c.runId.forall(_ == runId) && !QueryLookup.find(queryId).exists(q =>
          q.runId.toString == runId && q.isActive
        )
      )
    }
    over.foreach(forget)
  }

  /**
   * From the query listener: the run ended; its idle checks stop (an end request still completes).
   */
  def queryTerminated(queryId: String, runId: String): Unit = {
    byRun.remove(runId)
    get(queryId).filter(_.runId.forall(_ == runId)).foreach { c =>
      c.run.close()
      if (!c.run.endRequested) forget(c)
    }
  }

  private[spark] def forget(control: QueryControl): Unit = {
    control.run.close()
    byQuery.remove(control.queryId, control)
  }
}
