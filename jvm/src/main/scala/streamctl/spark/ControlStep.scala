package streamctl.spark

import org.apache.hadoop.conf.Configuration
import org.apache.spark.SparkContext
import org.apache.spark.util.SerializableConfiguration

import streamctl.Json
import streamctl.control.{ControlState, ControlStates, WatermarkSummary}
import streamctl.control.ControlStates.States
import streamctl.grouper.TaskName
import streamctl.metadata.MetadataStore
import streamctl.plan.SourceOptions
import streamctl.system.SSP

/**
 * Planning step 3 of [[StreamctlMicroBatchStream]]: in-band control on the driver.
 *
 * Readers record each (batch, task) result in the metadata store ([[ControlResults]]); this
 * step merges the results of the batch that ends at `start` into the next batch's offset
 * ([[ControlOffset]]), so the offset log carries the bookkeeping and a replay starts from
 * exactly the same states. It tells the query's [[QueryControl]] when the source's inputs
 * ended (every SSP at end-of-stream, an `AvailableNow` target reached, or an explicit
 * `end_of_stream`), hands each task its start state, reports the control metrics and
 * deletes results once the offset log no longer needs them.
 *
 * {{{
 * val next = control.plan(previous, plan.end(...), availableNowTarget)   // in latestOffset
 * TaskInputPartition(task.name, ranges, locations, control.forTask(end, task))
 * }}}
 */
final class ControlStep(
    options: SourceOptions,
    namespace: String,
    storePath: String,
    store: => MetadataStore,
    hadoopConf: Configuration) extends QueryControl.ControlSource {

  private val intermediate = options.intermediateStreams
  override val hasIntermediateStreams: Boolean = intermediate.nonEmpty
  override val stopOnEndOfStream: Boolean = options.stopOnEndOfStream

  private lazy val results = new ControlResults(store, namespace)
  private lazy val conf = SparkContext.getOrCreate().broadcast(new SerializableConfiguration(hadoopConf))
  private val query = QueryControls.current()
  query.foreach(_.addSource(this))

  // The states after batch `seq`, once loaded: each batch's results are read once.
  @volatile private var fresh: Option[(Long, States)] = None
  // The newest offset this run has seen (planned, started from or consumed).
  @volatile private var known: Option[SourceOffset] = None

  /**
   * A brand-new query's first offset, with the initial control state. Results left by an
   * earlier query with the same store are removed: they must not leak into this one.
   */
  def initialize(first: SourceOffset): SourceOffset =
    if (!hasIntermediateStreams) first
    else {
      results.deleteAll()
      first.withState(ControlOffset.Key, ControlOffset.initial.toJson)
    }

  /** After `end_of_stream(query)` the source admits nothing: the planner returns `previous` itself. */
  def holdsBack(previous: SourceOffset): Boolean = {
    known = Some(previous)
    val held = query.exists(_.endRequested)
    if (held) query.foreach(_.sourcePlanned(this, Some(InputsEnded.Requested), newData = false))
    held
  }

  /**
   * The end offset of the batch after `previous`: `next` plus the control state. A batch that
   * runs gets the next `seq` and starts from the states after `previous`'s batch; when
   * nothing else changed there is no batch, and those states wait in the store.
   */
  def plan(previous: SourceOffset, next: SourceOffset, availableNowTarget: Option[Map[SSP, Long]]): SourceOffset = {
    known = Some(previous)
    if (!hasIntermediateStreams) {
      val newData = next.json != previous.json
      report(newData, endedByTarget(next, availableNowTarget))
      return next
    }
    val prev = ControlOffset.of(previous)
    // An SSP whose beginning moved (a startpoint) is read from elsewhere: what was heard before
    // no longer describes what comes next, and the messages of the new range are read again.
    val after = statesAfter(prev) -- next.starts.valuesIterator.flatMap(_.keys)
    val unchanged = next.withState(ControlOffset.Key, prev.toJson)
    val newData = unchanged.json != previous.json
    val ended =
      if (allEndOfStream(after, next.ssps)) Some(InputsEnded.EndOfStream) else endedByTarget(next, availableNowTarget)
    report(newData, ended)
    if (newData) next.withState(ControlOffset.Key, ControlOffset(prev.seq + 1, after).toJson) else unchanged
  }

  /** The control start of `task` in the batch ending at `end`; None when it reads no intermediate SSP. */
  def forTask(end: SourceOffset, task: TaskName): Option[TaskControl] = {
    val own = end.tasks.getOrElse(task, Map.empty).keySet.filter(isIntermediate)
    if (own.isEmpty) None
    else {
      val ctl = ControlOffset.of(end)
      val others = end.ssps.iterator.filter(s => isIntermediate(s) && !own.contains(s))
        .foldLeft(WatermarkSummary.empty)((acc, s) => acc.add(ctl.states.getOrElse(s, ControlState.empty)))
      Some(TaskControl(ctl.seq, ControlStates.write(TaskControl.startOf(ctl.states, own)), others, storePath,
        results.namespace, conf))
    }
  }

  /** Spark is about to run the batch ending at `end`: its readers will (re)write its results. */
  def planned(end: SourceOffset): Unit = {
    known = Some(end)
    val seq = ControlOffset.of(end).seq
    if (fresh.exists(_._1 == seq)) fresh = None
  }

  /** Spark committed the batch ending at `end` and logged the next: older results are merged into the log. */
  def committed(end: SourceOffset): Unit =
    if (hasIntermediateStreams) results.deleteBefore(ControlOffset.of(end).seq)

  override def upstreamWatermark: Option[Long] = known.flatMap(o => watermarkOf(o.ssps, statesAfter(ControlOffset.of(o))))

  def stopped(): Unit = query.foreach(_.sourceStopped())

  /** `watermark` (epoch ms, when defined), `endOfStream` and per-SSP `control` producer counts (idle ones too). */
  def metrics(consumed: SourceOffset): Map[String, String] = {
    known = Some(consumed)
    if (!hasIntermediateStreams) return Map.empty
    val states = statesAfter(ControlOffset.of(consumed))
    val perSsp = Json.obj()
    consumed.ssps.filter(isIntermediate).toSeq.sorted.foreach { ssp =>
      val s = states.getOrElse(ssp, ControlState.empty)
      val n = perSsp.putObject(ssp.toString)
      n.put("taskCount", s.taskCount)
      n.put("producers", s.producers)
      n.put("endOfStream", s.endOfStreamCount)
      n.put("idle", s.idleProducers.size)
      s.watermark.foreach(n.put("watermark", _))
    }
    Map("endOfStream" -> allEndOfStream(states, consumed.ssps).toString, "control" -> Json.write(perSsp)) ++
      watermarkOf(consumed.ssps, states).map(w => "watermark" -> w.toString)
  }

  private def report(newData: Boolean, ended: Option[InputsEnded]): Unit =
    query.foreach(_.sourcePlanned(this, ended, newData))

  private def isIntermediate(ssp: SSP): Boolean = intermediate.contains(ssp.stream)

  private def statesAfter(ctl: ControlOffset): States = fresh match {
    case Some((seq, states)) if seq == ctl.seq => states
    case _ =>
      val merged = ControlStates.merge(ctl.states +: results.load(ctl.seq).map(_._2))
      fresh = Some(ctl.seq -> merged)
      merged
  }

  private def watermarkOf(ssps: Set[SSP], states: States): Option[Long] =
    ssps.iterator.filter(isIntermediate)
      .foldLeft(WatermarkSummary.empty)((acc, s) => acc.add(states.getOrElse(s, ControlState.empty))).watermark

  /** Every SSP of the source is intermediate and at end-of-stream: nothing more can come. */
  private def allEndOfStream(states: States, ssps: Set[SSP]): Boolean =
    ssps.nonEmpty && ssps.forall(s => isIntermediate(s) && states.get(s).exists(_.isEndOfStream))

  private def endedByTarget(next: SourceOffset, target: Option[Map[SSP, Long]]): Option[InputsEnded] =
    target.filter(t => next.minPositions.forall { case (s, o) => t.get(s).forall(o >= _) }).map(_ => InputsEnded.AvailableNow)
}
