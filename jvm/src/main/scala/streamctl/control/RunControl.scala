package streamctl.control

import scala.collection.mutable

import org.slf4j.LoggerFactory

import streamctl.StreamctlException

/**
 * The decisions of in-band control for one run of one streaming query, on the driver: when the
 * query's watermark and its end-of-stream go downstream, to which of its sinks, and when the query
 * may stop by itself. [[ProducerControl]] decides what each sink then sends; `spark.QueryControl`
 * finds the run's query and sink in Spark and the facts this class needs about the query
 * ([[RunControl.Query]]); Spark's sources and sinks call this class directly.
 *
 * Rules:
 *   - The watermark sent downstream is the minimum over the query's own event-time watermark (when
 *     it has `withWatermark`) and the upstream watermark of its intermediate inputs; undefined
 *     while any of those is. It goes out after each batch commits, and in real-time mode also
 *     whenever it advanced, checked at each sink's watermark interval.
 *   - End-of-stream goes downstream once the inputs have ended and nothing is left to write: every
 *     source found no new data and its inputs ended in the latest planning round, and no batch has
 *     started since (a batch that only flushes state, such as closing windows, still writes). It is
 *     sent as the query stops ([[sourceStopped]]), or by [[completeEnd]] after
 *     `streamctl.end_of_stream(query)` stopped it; at most once per run, and never for a run whose
 *     query failed (it may have more to write once restarted).
 *   - A finished `Trigger.AvailableNow` run ends only the sinks that count it as the end; the
 *     others declare themselves idle until the next run.
 *   - A batch that failed still counts as in flight: its data may be written again by the retry, so
 *     no end-of-stream goes out before that.
 *   - Real-time mode runs a batch whether or not there is anything to read: a batch whose sources
 *     all said their inputs ended reads and writes nothing, and does not count as in flight.
 *
 * {{{
 * val run = new RunControl("5f0c...", query, release = () => registry.forget(...))
 * run.addSource(source)
 * run.addSink(sink.target, endOfStreamAfterAvailableNow = true)(sink)
 * run.batchStarted(7); run.batchCommitted(7, wroteData = true)
 * run.sourcePlanned(source, Some(InputsEnded.EndOfStream), newData = false)
 * run.sourceStopped()                    // end-of-stream goes to the sink
 * }}}
 */
final class RunControl(
    val queryId: String,
    query: RunControl.Query,
    /**
     * Called when a source stopped and the run needs this control no more (no end request to
     * complete).
     */
    release: () => Unit
) extends ControlledQuery {

  private val log = LoggerFactory.getLogger(classOf[RunControl])

  private val sources = mutable.LinkedHashMap.empty[ControlSource, Option[InputsEnded]]
  private val atEndOfStream = mutable.Set.empty[ControlSource]
  private val sinks = mutable.ArrayBuffer.empty[(ControlSink, Boolean)]
  private var inFlight: Option[Long] = None
  private var endSent = false
  @volatile private var endWanted = false
  @volatile private var sinkUnknown: Option[String] = None
  @volatile private var realTime = false

  override def addSource(source: ControlSource): Unit = synchronized(sources.update(source, None))

  /**
   * Makes this run send the control messages of the sink with these options (once per stream: Spark
   * builds a sink's write at every batch), if it writes an intermediate stream; returns that sink
   * (None for a plain one, which carries no control messages).
   */
  def addSinkFor(options: SinkOptions): Option[ControlSink] =
    if (!options.intermediate) None
    else Some(addSink(
      (options.kafka.bootstrapServers, options.stream),
      options.endOfStreamAfterAvailableNow
    ) {
      new ControlMessageSender(
        options.kafka,
        options.stream,
        () => options.producerName.getOrElse(defaultProducerName),
        options.producerCount,
        options.idleTimeoutMs,
        () => query.running,
        options.watermarkIntervalMs
      )
    })

  /**
   * The producer name of a sink that names none: the query name, else its id (both survive
   * restarts).
   */
  def defaultProducerName: String = query.name.getOrElse(s"query-$queryId")

  /**
   * Registers the sink writing `target` (servers, stream) once: Spark builds the sink's write at
   * every batch. `endOfStreamAfterAvailableNow`: whether a finished `Trigger.AvailableNow` run
   * counts as the end of the stream. Returns the sink registered for `target` (the first one
   * built).
   */
  def addSink(
      target: (String, String),
      endOfStreamAfterAvailableNow: Boolean
  )(make: => ControlSink): ControlSink = {
    val (sink, added) = synchronized {
      sinks.collectFirst { case (s, _) if s.target == target => s } match {
        case Some(s) => (s, false)
        case None =>
          val s = make
          sinks += s -> endOfStreamAfterAvailableNow
          sinkUnknown = None
          (s, true)
      }
    }
    if (added) {
      sink.start()
      if (realTime) sink.realTime(() => producerWatermark())
    }
    sink
  }

  /**
   * A streamctl source of this query runs in real-time mode: its sinks, whenever added, send the
   * watermark as it advances (readers record it as they read), not only after each batch.
   */
  def realTimeSource(): Unit = {
    realTime = true
    currentSinks.foreach(_._1.realTime(() => producerWatermark()))
  }

  /** The query's sink could not be set up (bad options): an end request then fails saying `why`. */
  def sinkUnusable(why: String): Unit = sinkUnknown = Some(why)

  /** `streamctl.end_of_stream(query)` asked: sources admit no more data from now on. */
  override def endRequested: Boolean = endWanted

  def requestEnd(): Unit = endWanted = true

  def stopOnEndOfStream: Boolean =
    synchronized(sources.nonEmpty && sources.keys.forall(_.stopOnEndOfStream))

  override def sourcePlanned(
      source: ControlSource,
      ended: Option[InputsEnded],
      newData: Boolean
  ): Unit =
    synchronized(sources.update(source, if (newData) None else ended))

  override def sourceAtEndOfStream(source: ControlSource, atEnd: Boolean): Unit =
    synchronized(if (atEnd) atEndOfStream += source else atEndOfStream -= source)

  /**
   * The query should stop by itself: it wants to stop at end-of-stream, its `querySources` sources
   * (as many as Spark reports) are all streamctl sources, and each one's inputs are all at
   * end-of-stream after the batch it last reported on.
   */
  def endOfStreamReached(querySources: Int): Boolean = synchronized {
    stopOnEndOfStream && sources.size == querySources && sources.forall { case (s, planned) =>
      // Its last batch's report said so, or its last planning found nothing new after
      // end-of-stream everywhere (a run restarted at the end has no batch to report on).
      atEndOfStream.contains(s) || planned.contains(InputsEnded.EndOfStream)
    }
  }

  /** A batch is about to write: sinks coming back from idle say so before the writers start. */
  def batchStarted(epoch: Long): Unit = {
    synchronized {
      val readsNothing = realTime && sources.nonEmpty && sources.values.forall(_.isDefined)
      if (!readsNothing) {
        inFlight = Some(epoch)
        sources.keys.foreach(sources.update(_, None))
      }
    }
    currentSinks.foreach(_._1.batchStarted())
  }

  /** The batch's writers committed: send the query's watermark downstream if it advanced. */
  def batchCommitted(epoch: Long, wroteData: Boolean): Unit = {
    synchronized { inFlight = None }
    val watermark = producerWatermark(Some(epoch))
    currentSinks.foreach(_._1.batchCommitted(wroteData, watermark))
  }

  /** The batch's write failed or was cancelled: it stays in flight (see the class comment). */
  def batchAborted(epoch: Long): Unit = currentSinks.foreach(_._1.batchAborted())

  /**
   * The watermark this query sends downstream (see the class comment). `running`: the batch being
   * committed, whose own watermark Spark already applies.
   */
  def producerWatermark(running: Option[Long] = None): Option[Long] = {
    val upstream =
      synchronized(sources.keys.filter(_.hasIntermediateStreams).toSeq).map(_.upstreamWatermark)
    val own = query.eventTimeWatermark(running).toSeq
    val parts = upstream ++ own
    if (parts.isEmpty || parts.exists(_.isEmpty)) None else Some(parts.flatten.min)
  }

  /** Called by each streamctl source as the query stops, on its thread. */
  override def sourceStopped(): Unit =
    try {
      // A source of another kind (Spark's Kafka source, say) may still have rows to write: only a
      // query whose every source is a streamctl source ends by its inputs.
      val others = query.streamingSources.exists(_ > synchronized(sources.size))
      val reasons = synchronized {
        if (
          endSent || inFlight.isDefined || others || sources.isEmpty || sources.values.exists(
            _.isEmpty
          )
        ) None
        else Some(sources.values.flatten.toSet)
      }
      reasons.foreach { r =>
        // A query that failed may still have something to write once restarted.
        if (query.failed) log.warn(s"Query $queryId failed; end-of-stream not sent")
        else sendEndOfStream(r)
      }
      if (!endWanted) release()
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
              "batch may follow later); restart the query and call end_of_stream again"
          )
        case None => true
      }
    }
    if (pending) {
      sinkUnknown.foreach { why =>
        throw StreamctlException(
          s"Query $describe: end-of-stream was not sent: its streamctl sink could not be set up: $why"
        )
      }
      try sendEndOfStream(Set(InputsEnded.Requested))
      catch {
        case e: StreamctlException => throw StreamctlException(
            s"Query $describe: end-of-stream was not sent: ${e.getMessage}",
            e
          )
      }
    }
  }

  /** The run is over: idle checks stop, connections close. */
  def close(): Unit = currentSinks.foreach(_._1.close())

  private def currentSinks: Seq[(ControlSink, Boolean)] = synchronized(sinks.toSeq)

  private def describe: String = query.name.fold(queryId)(n => s"'$n' ($queryId)")

  private def sendEndOfStream(reasons: Set[InputsEnded]): Unit = {
    /* A sink may decline to treat a finished AvailableNow run as the end (runs repeated on a
     * schedule). */
    val availableNowOnly = reasons.contains(InputsEnded.AvailableNow) && !endWanted
    val (targets, goingOn) = currentSinks.partition { case (_, afterAvailableNow) =>
      !availableNowOnly || afterAvailableNow
    }
    val watermark = producerWatermark()
    goingOn.foreach { case (sink, _) =>
      try sink.runFinished()
      catch {
        case e: Exception => log.warn(
            s"Query $queryId: could not tell readers of stream '${sink.stream}' that it is idle " +
              s"until its next run: ${e.getMessage}"
          )
      }
    }
    targets.foreach { case (sender, _) =>
      sender.endOfStream(watermark)
      log.info(
        s"Query $queryId: inputs ended (${reasons.mkString(", ")}); sent end-of-stream of producer " +
          s"'${sender.producer}' to every partition of stream '${sender.stream}'"
      )
    }
    synchronized { endSent = true }
  }

  override def toString: String = s"RunControl($queryId)"
}

object RunControl {

  /**
   * What a run's control needs to know about its query, read from Spark by `spark.QueryControl`.
   */
  trait Query {

    /** The query's name, if it has one. */
    def name: Option[String]

    /**
     * The query's own event-time watermark: None when it has no `withWatermark`, `Some(None)` while
     * not known yet. `running`: the batch being committed, if any.
     */
    def eventTimeWatermark(running: Option[Long]): Option[Option[Long]]

    /** The query stopped with an error. */
    def failed: Boolean

    /** This run of the query is still going (its sinks' idle checks stop when it is not). */
    def running: Boolean

    /** How many streaming sources the query reads, streamctl's or not; None when not known. */
    def streamingSources: Option[Int] = None
  }
}
