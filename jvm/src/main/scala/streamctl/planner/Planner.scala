package streamctl
package planner

import java.util.concurrent.Executor

import streamctl.{Json, StreamctlException}
import streamctl.chooser.{AdmissionStep, ChooserState}
import streamctl.control.{BatchResults, ControlledQuery, SourceControl}
import streamctl.dataloss.{DataLossChecks, StreamIds}
import streamctl.grouper.GroupingStep
import streamctl.locality.{ExecutorId, HostAffinity, TaskLocalityStore}
import streamctl.metadata.{MetadataStore, StoreLayout}
import streamctl.plan.{BatchPlan, PlanningContext, PlanningStep, ReaderReports, SourcePosition}
import streamctl.startpoint.StartpointStep
import streamctl.system.{
  InBackground,
  SSP,
  SspRange,
  SspValues,
  StreamCheck,
  StreamDescription,
  SystemAdmin,
  TaskName,
  TimeLag
}

/**
 * Plans a streamctl source's micro-batches from broker offsets: the whole of what Spark's
 * `MicroBatchStream` does on the driver, without Spark (`spark.StreamctlMicroBatchStream` only
 * converts Spark's types). The driver never sees record contents: it decides per task and SSP where
 * each batch begins and ends and hands the executors exact offset ranges. Everything a replay needs
 * is in the positions Spark logs ([[SourcePosition]]); the planner keeps no state a restart would
 * need.
 *
 * A batch is planned as one chain of [[PlanningStep]]s ([[latestOffset]]):
 * {{{
 *   begins:  recreated streams -> grouping -> startpoints -> retention gaps -> broker heads
 *   ends:    truncation check -> admission (budget, chooser policy) -> in-band control
 * }}}
 *
 * {{{
 * val planner = new Planner(options, admin, store, storePath, StoreLayout.Source("0"), initialOffset,
 *   () => executors, reports, query = None)
 * val first = planner.initialPosition()
 * val next = planner.latestOffset(first, budget = Some(10000))
 * planner.planReads(first, next)   // one TaskRead per task with something to read
 * planner.commit(next)
 * }}}
 *
 * @param executors
 *   the live executors, for host affinity (empty: no preferred locations)
 * @param reports
 *   what the readers of earlier batches reported
 * @param query
 *   the query's in-band control, when the source runs in a streaming query
 * @param secondsBehind
 *   whether the progress metrics carry `secondsBehind` per SSP ([[TimeLag]]): it costs one request
 *   for the newest record times of the SSPs left behind (none for a caught-up query), sent with the
 *   planning and answered while the batch runs, at most every `Planner.NewestRefreshMs` unless
 *   another SSP falls behind
 * @param clockMs
 *   a monotonic clock (ms) for how often Kafka is asked about the streams
 * @param processedBefore
 *   per SSP, the newest record time an earlier run processed (the progress history keeps it), so
 *   seconds behind is known from a restart's first batch, before this run read the SSP; asked once,
 *   at the first planning
 * @param logsInBackground
 *   whether the query's engine logs batches in the background (Spark's asynchronous progress
 *   tracking), None when the engine cannot be read; asked at the first planning while startpoints
 *   wait ([[streamctl.startpoint.StartpointStep]] says what each answer does)
 */
final class Planner(
    options: SourceOptions,
    admin: SystemAdmin,
    store: => MetadataStore,
    storeLocation: String,
    keys: StoreLayout.Source,
    initialOffset: InitialOffset,
    executors: () => Seq[ExecutorId],
    reports: ReaderReports,
    query: Option[ControlledQuery],
    secondsBehind: Boolean = false,
    clockMs: () => Long = () => System.nanoTime() / 1000000L,
    background: Executor = InBackground.executor,
    processedBefore: () => Map[SSP, Long] = () => Map.empty,
    logsInBackground: () => Option[Boolean] = () => Some(false)
) {

  private val streamCheck = new StreamCheck(
    admin,
    options.subscription,
    options.grouping.checkIntervalMs,
    clockMs,
    background
  )
  private val dataLoss = new DataLossChecks(admin, options.failOnDataLoss)
  private val grouping =
    new GroupingStep(options.grouping, admin, store, keys.mappingKey, options.subscription.only)
  private val startpoints = new StartpointStep(
    () => store,
    admin,
    options.streams,
    storeLocation,
    options.startpointResolvers,
    logsInBackground,
    Some(keys.resolvedKey)
  )
  // The heads of the SSPs the batch starts from, asked before the streams are described so both
  // requests are in flight together ([[askHeads]]); SSPs the planning added meanwhile (a grown
  // stream, a new topic, an SSP Kafka did not know) are asked for here.
  @volatile private var askedHeads: (Set[SSP], () => Map[SSP, Long]) = (Set.empty, () => Map.empty)
  private val heads: PlanningStep = (plan: BatchPlan, ctx: PlanningContext) => {
    val known = headsOf(plan.ssps, askedHeads)
    /* A step may have moved a beginning past the head asked before it ran: a startpoint to the
     * latest offset (or a time, an offset) of a partition still written to, resolved after that
     * request. Only the broker knows those heads now, and a head behind its beginning would read as
     * lost records. Under `Trigger.AvailableNow` the answer is the run's target (askHeads), which
     * any move forward can pass; there it is asked once a run: past its target, an SSP has nothing
     * to read in the run anyway. */
    val passed = plan.minBegins.collect { case (s, b) if known.get(s).exists(_ < b) => s }.toSet
    if (ctx.availableNowTarget.isEmpty)
      plan.copy(heads = if (passed.isEmpty) known else known ++ admin.upcomingOffsets(passed))
    else {
      val unasked = passed -- headsPastTarget.keySet
      if (unasked.nonEmpty) headsPastTarget ++= admin.upcomingOffsets(unasked)
      plan.copy(heads =
        if (headsPastTarget.isEmpty) known
        else known ++ headsPastTarget.filter { case (s, _) => known.contains(s) }
      )
    }
  }
  // The broker's heads of the SSPs a `Trigger.AvailableNow` run's planning moved past its target.
  @volatile private var headsPastTarget: Map[SSP, Long] = Map.empty

  private def headsOf(ssps: Set[SSP], heads: (Set[SSP], () => Map[SSP, Long])): Map[SSP, Long] = {
    val (asked, answer) = heads
    val known = if (ssps.exists(asked.contains)) {
      val all = answer()
      // Usually the answer is for exactly these SSPs: nothing to take out, nothing missing.
      if (all.keysIterator.forall(ssps.contains)) all
      else all.filter { case (s, _) => ssps.contains(s) }
    } else Map.empty[SSP, Long]
    val missing = if (known.size == ssps.size) Set.empty[SSP] else ssps -- known.keySet
    if (missing.isEmpty) known else known ++ admin.upcomingOffsets(missing)
  }
  private val admission = new AdmissionStep(options.chooser, admin)
  private val control = new SourceControl(
    options.intermediateStreams,
    options.stopOnEndOfStream,
    store,
    keys.controlNamespace,
    query
  )
  private lazy val localityStore = new TaskLocalityStore(store, keys.localityKey)
  private val locality =
    new HostAffinity(options.hostAffinity, executors, () => localityStore, reports)

  /** Where each SSP begins: the steps that may move a beginning, then the broker's heads. */
  private val moves: Seq[PlanningStep] =
    Seq(dataLoss.recreations, grouping, startpoints, dataLoss.gaps)
  private val begins: Seq[PlanningStep] = moves :+ heads

  /** Where each SSP ends, and what the end offset carries. */
  private val ends: Seq[PlanningStep] = Seq(dataLoss.truncation, admission, control.step)

  @volatile private var availableNowTarget: Option[Map[SSP, Long]] = None
  /* The heads the last planning asked for; a real-time batch takes them only when asked
   * (metrics()). */
  @volatile private var lastHeads: () => Map[SSP, Long] = () => Map.empty
  /* The newest record time on the broker of the SSPs (given) the last batch left records behind in,
   * for seconds behind. */
  @volatile private var lastNewest: Set[SSP] => Map[SSP, Long] = (_: Set[SSP]) => Map.empty
  /* When a micro-batch's planning last asked for the newest record times, for which SSPs, and the
   * answer: taken by later batches until it is Planner.NewestRefreshMs old or an SSP it does not
   * cover falls behind. */
  private var newestAsked: Option[(Long, Set[SSP], () => Map[SSP, Long])] = None
  // Per SSP, the newest record time the readers reported, from the last batch that read it (before
  // this run read it: what the earlier run processed).
  @volatile private var processedMs: Map[SSP, Long] = Map.empty
  // Once per run, at its first planning.
  private lazy val seedProcessed: Unit = processedMs = processedBefore() ++ processedMs
  @volatile private var newestFailed = false
  // Records (offsets) each stream admitted into the batch last planned for reading.
  @volatile private var lastAdmitted: Map[String, Long] = Map.empty
  /* When the last batch was planned, for minOffsetsPerTrigger's maxTriggerDelay; None before the
   * run's first planning, which never waits (Spark's source counts the delay from its first trigger
   * too, so a restart with fewer records waiting than the minimum reads them at once). */
  @volatile private var lastBatchMs: Option[Long] = None
  // When the last planning began, and how long after the one before it.
  @volatile private var lastPlanningMs: Long = clockMs()
  @volatile private var lastCycleMs: Long = 0L
  // Real-time batches planned by this run ([[beginRealTime]] runs once per batch).
  private var realTimeBatches = 0L

  /**
   * The query's first position: read back if an earlier run of batch 0 wrote it, else from the
   * broker now.
   */
  def initialPosition(): SourcePosition = initialOffset.getOrCreate {
    /* Not counted as the planner's check: the first planning of every run asks again (see
     * latestOffset). */
    val described = streamCheck.describe()
    val mapping = grouping.initial(described)
    val start =
      options.starting(batch = false).resolve(admin, mapping.ssps, options.noTimestampMatchIsLatest)
    control.initialize(dataLoss.initialize(grouping.initialPosition(mapping, start), described))
  }

  /**
   * Plans the batch that begins at `previous` (the previous batch's end, already in the offset log)
   * with the record budget `budget`; returns `previous` itself when there is nothing new (no
   * batch). Beginnings that differ from `previous`'s positions go into the end's `starts`.
   * `allAvailable` is Spark's `ReadAllAvailable` (`Trigger.Once`): no budget, and no waiting for
   * `minOffsetsPerTrigger` records.
   */
  def latestOffset(
      previous: SourcePosition,
      budget: Option[Long],
      allAvailable: Boolean = false
  ): SourcePosition = {
    val planningMs = clockMs()
    lastCycleMs = planningMs - lastPlanningMs
    lastPlanningMs = planningMs
    if (control.holdsBack(previous) || (!allAvailable && waitsForMore(previous, planningMs)))
      return previous
    seedProcessed
    askHeads(previous)
    // Always Some at the first planning of a run, so a run's one-shot steps (startpoints) never
    // see the planning repeated below.
    val described = checkedStreams(previous)
    def begin(d: Option[Map[String, StreamDescription]])
        : (BatchPlan, PlanningContext) = {
      val ctx = PlanningContext(d, availableNowTarget, budget, reports.skipped)
      (chain(begins, BatchPlan(previous), ctx), ctx)
    }
    val first =
      try begin(described)
      catch {
        // A topic of a pattern deleted since the last check: Kafka refuses to list its offsets.
        // Asking about the streams now makes it the data loss a check finds (fail, or go on).
        case e: StreamctlException if described.isEmpty && SystemAdmin.streamGone(e) =>
          begin(Some(streamCheck.now()))
      }
    val (begun, ctx) = first match {
      // A partition that ends before our position lost records we counted on: ask Kafka about
      // the streams now, so a recreated topic is told from a truncated one in this batch.
      case (plan, _) if described.isEmpty && DataLossChecks.behind(plan).nonEmpty =>
        begin(Some(streamCheck.now()))
      case done => done
    }
    lastHeads = () => begun.heads
    val next = chain(ends, begun, ctx).end
    if (next == previous) previous
    else {
      dataLoss.planned(next)
      // A moved beginning (a startpoint, a gap skipped) leaves the processed time behind.
      if (next.starts.nonEmpty) processedMs --= next.starts.valuesIterator.flatMap(_.keysIterator)
      lastBatchMs = Some(clockMs())
      if (secondsBehind) {
        // Only where records stay behind (elsewhere the figure is 0 without asking).
        val behind = next.minPositions.collect {
          case (ssp, o) if begun.heads.get(ssp).exists(_ > o) => ssp
        }.toSet
        val now = clockMs()
        val fresh = newestAsked.exists { case (at, ssps, _) =>
          now - at < Planner.NewestRefreshMs && behind.subsetOf(ssps)
        }
        // Asked now, so the answer comes while the batch runs. Only the batch's metrics wait for
        // it, so even the request is made on another thread.
        if (!fresh)
          newestAsked = Some((
            now,
            behind,
            InBackground.ask(background)(admin.newestTimestampsAsked(behind))
          ))
        val asked = newestAsked.get._3
        lastNewest = _ => asked()
      }
      next
    }
  }

  /**
   * Asks the broker's heads of the SSPs `previous` reads, to be answered in the heads step: the
   * request travels together with the streams' description (asked every `partition.check.interval`,
   * so at every real-time batch boundary), instead of after it.
   */
  private def askHeads(previous: SourcePosition): Unit = askedHeads = availableNowTarget match {
    // A `Trigger.AvailableNow` run reads up to the offsets current when it started, so, as Spark's
    // own source does, its batches take those instead of asking the broker every batch (at 4,096
    // partitions the request and its round trip were half of planning). An SSP missing from the
    // target (it appeared since) is asked in the heads step.
    case Some(target) => (target.keySet, () => target)
    case None =>
      val ssps = previous.ssps
      (ssps, admin.upcomingOffsetsAsked(ssps))
  }

  /**
   * `minOffsetsPerTrigger`: fewer records than that are waiting and the last batch is less than
   * `maxTriggerDelay` ago, so no batch yet. Decided before any step runs, so a step with a one-shot
   * effect (startpoints) is never planned into a batch that is then dropped. `Trigger.AvailableNow`
   * reads what is there without waiting, as Spark's source does, and so does a run's first
   * planning.
   */
  private def waitsForMore(previous: SourcePosition, nowMs: Long): Boolean =
    options.minRecordsPerBatch.exists { min =>
      val withinDelay = lastBatchMs match {
        case None => lastBatchMs = Some(nowMs); false // the delay counts from here
        case Some(last) => nowMs - last < options.maxTriggerDelayMs
      }
      availableNowTarget.isEmpty && withinDelay && {
        val positions = previous.minPositions
        TimeLag.recordsBehind(admin.upcomingOffsets(positions.keySet), positions).values.sum < min
      }
    }

  /**
   * The broker's heads as the last planning saw them (query progress shows them as `latestOffset`).
   */
  def reportedHeads: Map[SSP, Long] = lastHeads()

  /** `Trigger.AvailableNow`: the batches of this run read up to the offsets current now. */
  def prepareForTriggerAvailableNow(): Unit =
    availableNowTarget = Some(admin.upcomingOffsets(
      streamCheck.describe().toSeq.flatMap { case (s, d) =>
        (0 until d.partitions).map(p => SSP.kafka(s, p))
      }.toSet
    ))

  /**
   * What each task reads in the batch from `start` to `end`, with where it would like to run.
   * Planned once per pair of positions: Spark asks twice for every batch it plans (each physical
   * plan it builds of the batch asks again, with the same offsets), and at 4,096 partitions each
   * planning is several milliseconds of the batch's `queryPlanning`.
   */
  def planReads(start: SourcePosition, end: SourcePosition): Seq[TaskRead] =
    lastReads match {
      case Some((s, e, reads)) if (s eq start) && (e eq end) => reads
      case _ =>
        val reads = planReadsOnce(start, end)
        lastReads = Some((start, end, reads))
        reads
    }

  // The last batch planned for reading, by the identity of its positions (see planReads).
  @volatile private var lastReads: Option[(SourcePosition, SourcePosition, Seq[TaskRead])] = None

  private def planReadsOnce(start: SourcePosition, end: SourcePosition): Seq[TaskRead] = {
    val bootstrapHeads = end.state(ChooserState.Codec).bootstrapHeads
    val placement = locality.plan(end.json, end.tasks.keys.toSeq)
    val ids = end.state(StreamIds.Codec).ids
    val reads = end.tasks.toSeq.sortBy(_._1).flatMap { case (task, positions) =>
      // Most tasks read one SSP: nothing to sort.
      val ordered = if (positions.size == 1) positions.toSeq else positions.toSeq.sortBy(_._1)
      val ranges = ordered.map { case (ssp, until) =>
        val from = end.startOf(start, task, ssp).getOrElse(until)
        SspRange(ssp, math.min(from, until), until)
      }.filter(_.size > 0)
      if (ranges.isEmpty) None
      else Some(TaskRead(
        task,
        ranges,
        placement.preferredLocations(task),
        bootstrapHeads.filter(h => ranges.exists(_.ssp == h._1)),
        control.forTask(end, task),
        TaskRead.streamIdsOf(ids, ranges)
      ))
    }
    control.planned(end, reads.filter(_.control.isDefined).map(_.task))
    lastAdmitted = (end.ssps.map(_.stream).map(_ -> 0L).toMap ++
      reads.flatMap(_.ranges).groupMapReduce(_.ssp.stream)(_.size)(_ + _))
    reads
  }

  /**
   * Real-time mode: plans the batch that begins at `previous` (the previous batch's end). Its
   * beginnings come from the same steps as a micro-batch's (recreated streams, grouping and
   * partition growth, startpoints, retention gaps, broker heads), so each takes effect at a batch
   * boundary; there is no end to plan: each task reads open-ended until Spark ends the batch, and
   * its readers' positions make the end ([[endRealTime]]). After `end_of_stream(query)` the batch
   * reads nothing.
   */
  def beginRealTime(previous: SourcePosition): RealTimeBatch = {
    if (control.holdsBack(previous)) return RealTimeBatch(previous, BatchPlan(previous), Seq.empty)
    seedProcessed
    askHeads(previous)
    val ctx = PlanningContext(checkedStreams(previous), None, None, reports.skipped)
    // Tasks read open-ended, so the heads matter to a real-time batch only for a bootstrap stream
    // (the head its chooser reads to); otherwise they are for the batch's metrics alone, taken
    // when Spark asks for those after the batch, and the batch starts without waiting for Kafka.
    val bootstrapping = options.chooser.bootstrapStreams.nonEmpty
    val begun =
      control.beginRealTime(chain(if (bootstrapping) begins else moves, BatchPlan(previous), ctx))
    lastHeads =
      if (bootstrapping) () => begun.heads
      else {
        val asked = askedHeads
        // Only metrics wait for these: Kafka not answering leaves the lag out of them, it does
        // not fail the query (its readers meet the outage themselves).
        lazy val answer =
          try headsOf(begun.ssps, asked)
          catch {
            case e: StreamctlException =>
              Planner.log.warn(s"Lag metrics left out: ${e.getMessage}"); Map.empty[SSP, Long]
          }
        () => answer
      }
    if (secondsBehind) {
      // The end is known only after the batch: asked then, once, like its heads.
      var answer: Option[Map[SSP, Long]] = None
      lastNewest = ssps =>
        synchronized {
          if (answer.isEmpty) answer = Some(admin.newestTimestampsAsked(ssps)())
          answer.get
        }
    }
    val start = begun.end
    dataLoss.planned(start)
    val recorded = start.state(ChooserState.Codec)
    /* A recorded head the stream no longer reaches (recreated smaller) is lowered to where it ends
     * now, as a micro-batch's admission does: else bootstrapping would never end. */
    val bootstrap = recorded.bootstrapHeads.map { case (s, h) =>
      s -> begun.heads.get(s).fold(h)(math.min(h, _))
    } ++ begun.heads.filter { case (s, _) =>
      options.chooser.isBootstrap(s.stream) && !recorded.bootstrapHeads.contains(s)
    }
    /* Recorded in the batch's end as a micro-batch's admission records them: the next batch, and a
     * restart, read a bootstrap stream to the same heads, not to wherever its head is by then. */
    val planned =
      if (bootstrap == recorded.bootstrapHeads) begun
      else begun.withState(_.updated(ChooserState.Codec, recorded.copy(bootstrapHeads = bootstrap)))
    // Known by its number, not its start: real-time batches that read nothing all begin at the
    // same position, and each is a batch of its own for the readers' metrics.
    realTimeBatches += 1
    val placement = locality.plan(s"real-time batch $realTimeBatches", start.tasks.keys.toSeq)
    /* A partition held by an expansion is not read; its task reports nothing for it and it ends
     * where it begins. */
    val reads = start.tasks.toSeq.sortBy(_._1).flatMap { case (task, positions) =>
      val ranges = positions.toSeq.sortBy(_._1).collect {
        case (ssp, from) if !begun.held.contains(ssp) =>
          SspRange(ssp, from, SspRange.OpenEnded)
      }
      if (ranges.isEmpty) None
      else Some(TaskRead(
        task,
        ranges,
        placement.preferredLocations(task),
        bootstrap.filter(h => positions.contains(h._1)),
        control.forTask(start, task),
        TaskRead.streamIdsOf(start.state(StreamIds.Codec).ids, ranges)
      ))
    }
    RealTimeBatch(previous, planned, reads)
  }

  /**
   * Real-time mode: the end of `batch`, from where each task's reader stopped (`readers`, by task:
   * the next offset of each SSP and, for intermediate SSPs, the control states reached). A task
   * Spark did not report on ends where it began.
   */
  def endRealTime(batch: RealTimeBatch, readers: Map[TaskName, ReaderEnd]): SourcePosition = {
    // The next batch's check of the streams, asked while Spark logs this one.
    streamCheck.askAhead()
    if (batch.reads.isEmpty) batch.previous
    else {
      val end = batch.plan.end((task, ssp, begin) =>
        readers.get(task).flatMap(_.positions.get(ssp)).getOrElse(begin)
      )
      control.endRealTime(batch.previous, end, readers.values.flatMap(_.control))
    }
  }

  /**
   * The streams as the planning from `previous` must see them: when a check is due, and always when
   * the inputs look ended after `previous` (the control says when to ask).
   */
  private def checkedStreams(previous: SourcePosition): Option[Map[String, StreamDescription]] =
    if (control.endUnconfirmed(previous)) Some(streamCheck.now()) else streamCheck.ifDue()

  /**
   * Spark committed the batch that ends at `end`, which it does right after planning the next
   * batch: a check of the streams due by the planning after that one (a cycle away, as the last one
   * was) is asked now, and answered while the batch runs.
   */
  def commit(end: SourcePosition): Unit = {
    (begins ++ ends).foreach(_.committed(end))
    streamCheck.askAhead(withinMs = lastCycleMs)
  }

  /** Where the readers of this source's micro-batches report their control results. */
  def controlResults: BatchResults = control.collected

  /** The progress metrics after the batch ending at `consumed`. */
  def metrics(consumed: Option[SourcePosition]): Map[String, String] = consumed match {
    case None => locality.metrics
    case Some(c) =>
      val loss = dataLoss.metrics(c, reports.skipped)
      val behind = TimeLag.recordsBehind(lastHeads(), c.minPositions)
      if (behind.isEmpty) locality.metrics ++ loss
      else {
        Map(
          "minOffsetsBehindLatest" -> behind.values.min.toString,
          "maxOffsetsBehindLatest" -> behind.values.max.toString,
          "avgOffsetsBehindLatest" -> (behind.values.sum.toDouble / behind.size).toString,
          "recordsBehindHead" -> Json.write(SspValues.byName(behind)),
          "admitted" -> Json.write(admittedJson)
        ) ++ timeMetrics(behind) ++ loss ++ locality.metrics ++ control.metrics(c)
      }
  }

  /**
   * `lastRecordTimeMs` (per SSP, the newest record time processed, as far as this run knows) and,
   * when asked for, `secondsBehind` ([[TimeLag]]; SSPs where it is unknown left out).
   */
  private def timeMetrics(behind: Map[SSP, Long]): Map[String, String] = {
    val read = reports.recordTimes
    if (read.nonEmpty) processedMs = processedMs ++ read
    val processed = processedMs.filter { case (s, _) => behind.contains(s) }
    val times = Map("lastRecordTimeMs" -> Json.write(SspValues.byName(processed)))
    if (!secondsBehind) times
    else {
      val newest =
        try lastNewest(behind.collect { case (s, b) if b > 0 => s }.toSet)
        catch {
          // Only this figure waits for the answer: without it the figure is left out, the query
          // goes on.
          case e: StreamctlException =>
            if (!newestFailed) Planner.log.warn(s"Seconds behind left out: ${e.getMessage}")
            newestFailed = true
            Map.empty[SSP, Long]
        }
      val seconds = behind.flatMap { case (s, b) =>
        TimeLag.secondsBehind(b, newest.get(s), processed.get(s)).map(s -> _)
      }
      times + ("secondsBehind" -> Json.write(SspValues.byName(seconds)))
    }
  }

  private def admittedJson = {
    val n = Json.obj()
    lastAdmitted.toSeq.sorted.foreach { case (s, c) => n.put(s, c) }
    n
  }

  /** The query stops: it may now send end-of-stream downstream. */
  def stop(): Unit = control.stopped()

  private def chain(steps: Seq[PlanningStep], plan: BatchPlan, ctx: PlanningContext): BatchPlan =
    steps.foldLeft(plan)((p, step) => step(p, ctx))
}

object Planner {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[Planner])

  /**
   * How old an answer about the newest record times (for seconds behind) a micro-batch may take
   * instead of asking the broker again: asking for every partition behind was most of what
   * monitoring cost per batch at 1,024 partitions. The figure can read up to this much low when
   * records arrived since; a Prometheus scrape (15 s typically) or Spark's metrics sinks (10 s by
   * default) rarely look more often.
   */
  val NewestRefreshMs = 5000L
}
