package streamctl.control

import streamctl.control.SspControlStates.States
import streamctl.metadata.MetadataStore
import streamctl.plan.{BatchPlan, PlanningStep, SourcePosition}
import streamctl.system.{SSP, TaskName}

/**
 * In-band control of one streamctl source on the driver. Readers report each (batch, task) result
 * to the driver, which keeps each micro-batch's in the metadata store ([[BatchResults]],
 * [[ControlResults]]); the source's planning step ([[step]], the last of the chain) merges the
 * results of the batch that ends at `start` into the next batch's offset ([[ControlState]]), so the
 * offset log carries the bookkeeping and a replay starts from exactly the same states. This class
 * tells the query ([[ControlledQuery]]) when the source's inputs ended (every SSP at end-of-stream,
 * an `AvailableNow` target reached, or an explicit `end_of_stream`), hands each task its start
 * state, plans real-time batches' control, reports the control metrics and the upstream watermark.
 *
 * {{{
 * val control = new SourceControl(intermediateStreams, stopOnEndOfStream = true, store, namespace, query)
 * val planned = control.step(admitted, ctx)          // last step of latestOffset
 * control.forTask(end, task)                         // the task's TaskControl, in planInputPartitions
 * }}}
 */
final class SourceControl(
    intermediate: Set[String],
    override val stopOnEndOfStream: Boolean,
    store: => MetadataStore,
    namespace: String,
    query: Option[ControlledQuery]
) extends ControlSource {

  override val hasIntermediateStreams: Boolean = intermediate.nonEmpty

  private[control] lazy val results = new ControlResults(store, namespace)

  /** What the readers of this run's micro-batches report, by batch. */
  val collected = new BatchResults(results)
  query.foreach(_.addSource(this))

  // The states after batch `seq`, once loaded: each batch's results are read once.
  @volatile private var fresh: Option[(Long, States)] = None
  // The newest position this run has seen (planned, started from or consumed).
  @volatile private[control] var known: Option[SourcePosition] = None
  // The real-time batch running now: its seq, start states and SSPs.
  @volatile private var live: Option[(Long, States, Set[SSP])] = None
  // This run already removed what a dead run recorded past its offset log ([[beginRealTime]]).
  @volatile private var realTimeCleaned = false
  // The SSPs whose end-of-stream a planning confirmed with the streams as they were then.
  @volatile private var endConfirmed: Option[Set[SSP]] = None
  /* The seq of the last real-time batch this run ended: its end offset carries what its readers
   * ended with. What they recorded under that seq as they read is in it, except what an attempt
   * that failed recorded (its retry began again at the batch's start and may have read less):
   * merged in, that attempt's end-of-stream or watermark would be taken for the retry's. */
  @volatile private var realTimeEnd: Option[Long] = None

  /**
   * A brand-new query's first position, with the initial control state. Results left by an earlier
   * query with the same store are removed: they must not leak into this one.
   */
  def initialize(first: SourcePosition): SourcePosition =
    if (!hasIntermediateStreams) first
    else {
      results.deleteAll()
      first.withState(_.updated(ControlState.Codec, ControlState.initial))
    }

  /**
   * After `end_of_stream(query)` the source admits nothing: the planner returns `previous` itself.
   */
  def holdsBack(previous: SourcePosition): Boolean = {
    known = Some(previous)
    val held = query.exists(_.endRequested)
    if (held) query.foreach(_.sourcePlanned(this, Some(InputsEnded.Requested), newData = false))
    held
  }

  /**
   * Every SSP `previous` knows is at end-of-stream, and no planning has seen the streams since: the
   * planning from `previous` must ask the system about them now, once. A partition added since the
   * last check (up to `partition.check.interval` ago) may hold records that the others'
   * end-of-stream says nothing about, and ending the query over the older list would leave them
   * unread for good.
   */
  def endUnconfirmed(previous: SourcePosition): Boolean =
    hasIntermediateStreams && !endConfirmed.contains(previous.ssps) && {
      val atEnd = allEndOfStream(statesAfter(previous.state(ControlState.Codec)), previous.ssps)
      if (atEnd) endConfirmed = Some(previous.ssps)
      atEnd
    }

  /** The source's planning step: the control state of each batch, last in the chain. */
  val step: PlanningStep = new ControlStep(this)

  /**
   * Real-time mode: the control state of the batch that begins with `plan` (every task reads
   * open-ended). It gets the next `seq`, under which its readers record their states as they read
   * ([[upstreamWatermark]] merges them while the batch runs), and starts from the states after the
   * previous batch. Whether the batch can read anything is known now: nothing can follow
   * end-of-stream on every SSP.
   */
  def beginRealTime(plan: BatchPlan): BatchPlan = {
    val previous = plan.previous
    known = Some(previous)
    if (!hasIntermediateStreams) {
      report(newData = true, None)
      return plan
    }
    val prev = previous.state(ControlState.Codec)
    /* What a run that died in its batch prev.seq + 1 recorded is not in the offset log: never merge
     * it. */
    // Only a run's first batch can find such results (within a run, readers record under the
    // running batch's seq only), so later boundaries skip the store listing.
    if (!realTimeCleaned) {
      results.deleteAfter(prev.seq)
      realTimeCleaned = true
    }
    val begun = plan.withState(_.updated(ControlState.Codec, prev)).end
    val states = startStates(plan, begun)
    val ended = allEndOfStream(states, begun.ssps)
    report(newData = !ended, if (ended) Some(InputsEnded.EndOfStream) else None)
    live = Some((prev.seq + 1, states, begun.ssps))
    plan.withState(_.updated(ControlState.Codec, ControlState(prev.seq + 1, states)))
  }

  /**
   * Real-time mode: the end of the batch `started` (the beginning [[beginRealTime]] planned), given
   * where its readers stopped (`end`, state as begun) and the states they reported with their
   * positions. The end offset carries the states at the batch's end (merging them again with what
   * readers recorded under its `seq` changes nothing). A batch that read nothing and heard nothing
   * ends exactly at `previous`, as Spark's `processAllAvailable` expects.
   */
  def endRealTime(
      previous: SourcePosition,
      end: SourcePosition,
      readerStates: Iterable[States]
  ): SourcePosition = {
    live = None
    val result =
      if (!hasIntermediateStreams) { if (end == previous) previous else end }
      else {
        val ctl = end.state(ControlState.Codec)
        val merged = SspControlStates.merge(ctl.states +: readerStates.toSeq)
        val unchanged = end.withState(_.updated(
          ControlState.Codec,
          ControlState(previous.state(ControlState.Codec).seq, merged)
        ))
        if (unchanged == previous) previous
        else {
          realTimeEnd = Some(ctl.seq)
          end.withState(_.updated(ControlState.Codec, ControlState(ctl.seq, merged)))
        }
      }
    known = Some(result)
    val newData = result != previous
    if (!hasIntermediateStreams) report(newData, None)
    else {
      val states = result.state(ControlState.Codec).states
      report(
        newData,
        if (allEndOfStream(states, result.ssps)) Some(InputsEnded.EndOfStream) else None
      )
    }
    result
  }

  /**
   * The control start of `task` in the batch ending at `end`; None when it reads no intermediate
   * SSP.
   */
  def forTask(end: SourcePosition, task: TaskName): Option[TaskControl] = {
    // Asked for every task of every batch: a source without intermediate streams has no work.
    if (!hasIntermediateStreams) return None
    val own = end.tasks.getOrElse(task, Map.empty).keySet.filter(isIntermediate)
    if (own.isEmpty) None
    else {
      val ctl = end.state(ControlState.Codec)
      val others =
        WatermarkSummary.of(end.ssps.iterator.filter(s => isIntermediate(s) && !own.contains(s))
          .map(ctl.states.getOrElse(_, SspControlState.empty)).toSeq)
      Some(TaskControl(
        ctl.seq,
        SspControlStates.write(TaskControl.startOf(ctl.states, own)),
        others
      ))
    }
  }

  /**
   * Spark is about to run the batch ending at `end`: the readers of `reading` (the tasks planned
   * with a [[TaskControl]]) will report its results.
   */
  def planned(end: SourcePosition, reading: Iterable[TaskName]): Unit = {
    known = Some(end)
    if (hasIntermediateStreams) {
      val seq = end.state(ControlState.Codec).seq
      if (fresh.exists(_._1 == seq)) fresh = None
      collected.expect(seq, reading)
    }
  }

  override def upstreamWatermark: Option[Long] = live match {
    // A real-time batch is running: what its readers recorded so far, freshly read.
    case Some((seq, start, ssps)) =>
      watermarkOf(ssps, SspControlStates.merge(start +: results.load(seq).map(_._2)))
    case None => settledWatermark
  }

  private def settledWatermark: Option[Long] =
    known.flatMap(o => watermarkOf(o.ssps, statesAfter(o.state(ControlState.Codec))))

  def stopped(): Unit = query.foreach(_.sourceStopped())

  /**
   * `watermark` (epoch ms, when defined), `endOfStream` and per-SSP `control` producer counts (idle
   * ones too), after the batch ending at `consumed`; the query hears whether it is at
   * end-of-stream.
   */
  def metrics(consumed: SourcePosition): Map[String, String] = {
    known = Some(consumed)
    if (!hasIntermediateStreams) return Map.empty
    val states = statesAfter(consumed.state(ControlState.Codec))
    val figures = consumed.ssps.filter(isIntermediate).toSeq.sorted.map(ssp =>
      ssp -> SspControlFigures.of(states.getOrElse(ssp, SspControlState.empty))
    )
    val atEnd = allEndOfStream(states, consumed.ssps)
    query.foreach(_.sourceAtEndOfStream(this, atEnd))
    Map("endOfStream" -> atEnd.toString, ControlMetric.Name -> ControlMetric.write(figures)) ++
      watermarkOf(consumed.ssps, states).map(w => "watermark" -> w.toString)
  }

  private[control] def report(newData: Boolean, ended: Option[InputsEnded]): Unit =
    query.foreach(_.sourcePlanned(this, ended, newData))

  private def isIntermediate(ssp: SSP): Boolean = intermediate.contains(ssp.stream)

  /**
   * The states the batch of `plan`, beginning at `next`, starts from: those after the previous
   * batch, less SSPs whose beginning moved (a startpoint: read from elsewhere, what was heard no
   * longer describes what comes next; a retention gap skipped reads on, its ended producers still
   * ended), with producers that ended before a partition was added counted as ended there.
   */
  private[control] def startStates(plan: BatchPlan, next: SourcePosition): States =
    SspControlStates.withEndsBeforeGrowth(
      statesAfter(plan.previous.state(ControlState.Codec)) -- plan.restarted(next),
      next.ssps
    )

  private[control] def statesAfter(ctl: ControlState): States = fresh match {
    case _ if realTimeEnd.contains(ctl.seq) => ctl.states
    case Some((seq, states)) if seq == ctl.seq => states
    case _ =>
      val heard = collected.of(ctl.seq).getOrElse(results.load(ctl.seq))
      val merged = SspControlStates.merge(ctl.states +: heard.map(_._2))
      // While its batch runs, a batch's results are not all in yet.
      if (collected.settled(ctl.seq)) fresh = Some(ctl.seq -> merged)
      merged
  }

  private def watermarkOf(ssps: Set[SSP], states: States): Option[Long] =
    WatermarkSummary.of(ssps.iterator.filter(isIntermediate).map(states.getOrElse(
      _,
      SspControlState.empty
    )).toSeq).watermark

  /** Every SSP of the source is intermediate and at end-of-stream: nothing more can come. */
  private[control] def allEndOfStream(states: States, ssps: Set[SSP]): Boolean =
    SspControlStates.allEndOfStream(ssps, s => if (isIntermediate(s)) states.get(s) else None)

  private[control] def endedByTarget(
      next: SourcePosition,
      target: Option[Map[SSP, Long]]
  ): Option[InputsEnded] =
    target.filter(t => next.minPositions.forall { case (s, o) => t.get(s).forall(o >= _) }).map(_ =>
      InputsEnded.AvailableNow
    )
}
