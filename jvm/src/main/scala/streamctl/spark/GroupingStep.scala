package streamctl.spark

import streamctl.StreamctlException
import streamctl.grouper.{Grouping, TaskMapping, TaskName}
import streamctl.metadata.MetadataStore
import streamctl.system.{SSP, SystemAdmin}

/**
 * Step 1 of batch planning: which task reads which SSP, and where a newly read SSP begins.
 *
 * The mapping in force is the one in the batch's start Offset (the key set of its tasks, plus
 * [[GroupingState]]). At most every `partition.check.interval`, and always at the first
 * planning after a (re)start, the step asks Kafka for partition counts and lets [[Grouping]]
 * derive the new mapping: partitions added to a stream join the task of their origin
 * partition (no task is created), a shrunk stream or a growth the expansion algorithm refuses
 * fails the query. SSPs a task did not read before begin at the position another task has
 * for them, or else at their first (oldest) offset, so records written to a new partition
 * right after the expansion are read. New partitions are held back until the older
 * partitions of their task have passed the point the growth was seen ([[ExpansionHolds]]).
 *
 * The metadata store records the mapping (namespace `grouper`, key `mapping-<source id>`)
 * whenever this run computes one that differs from what it last wrote. On a first run the
 * stored mapping is the previous one, so a query started with a fresh checkpoint and the same
 * `metadata.store.path` keeps its task names. Afterwards the Offset rules: a store written
 * for a batch that never reached the offset log is simply rewritten.
 *
 * {{{
 * val step = new GroupingStep(GroupingOptions(options), options.streams, admin, store, "mapping-0")
 * val first = step.initialOffset(step.initial(), startOffsets)
 * val plan = step.plan(BatchPlan(previous), availableNowTarget = None)
 * val admissionHeads = step.admissible(plan, heads)
 * }}}
 */
final class GroupingStep(
    options: GroupingOptions,
    streams: Seq[String],
    admin: SystemAdmin,
    store: => MetadataStore,
    storeKey: String,
    nowMs: () => Long = () => System.nanoTime() / 1000000L) {

  private val config = options.config
  private var lastCheckMs: Option[Long] = None
  private var written: Option[TaskMapping] = None

  /** The mapping for a query's first batch: the stored one (if any) brought up to the current partition counts. */
  def initial(): TaskMapping = {
    val what = s"metadata store namespace '${TaskMapping.StoreNamespace}' key '$storeKey'"
    val previous = store.get(TaskMapping.StoreNamespace, storeKey).map(TaskMapping.fromJson(_, what))
    val mapping = Grouping(config, previous, partitionCounts())
    lastCheckMs = Some(nowMs())
    record(mapping)
    mapping
  }

  /** The first Offset: every task's SSPs at `starts`, with the grouping state. */
  def initialOffset(mapping: TaskMapping, starts: Map[SSP, Long]): SourceOffset =
    SourceOffset(
      mapping.taskSsps.map { case (t, ssps) => t -> ssps.iterator.map(s => s -> starts(s)).toMap },
      Map(GroupingState.Key -> GroupingState(mapping.initialPartitionCounts, Map.empty).toJson))

  /**
   * Adjusts `plan` to the mapping in force. `availableNowTarget` (Trigger.AvailableNow) caps
   * the barriers of new holds: nothing past it is read in this run anyway.
   */
  def plan(plan: BatchPlan, availableNowTarget: Option[Map[SSP, Long]]): BatchPlan = {
    val state = GroupingState.of(plan.state)
    val inForce = GroupingStep.inForce(plan, state)
    val mapping =
      if (checkDue()) {
        val m = Grouping(config, Some(inForce), partitionCounts())
        record(m)
        m
      } else inForce
    def barriers(ssps: Set[SSP]): Map[SSP, Long] = {
      val heads = admin.upcomingOffsets(ssps)
      availableNowTarget.fold(heads)(t => heads.map { case (s, h) => s -> t.get(s).fold(h)(math.min(h, _)) })
    }
    GroupingStep.adjust(plan, inForce, mapping, state.fold(Map.empty: ExpansionHolds.Holds)(_.holds),
      config.broadcastStreams, admin.oldestOffsets, barriers)
  }

  /** `heads` as admission must see them: SSPs on hold end where they begin. */
  def admissible(plan: BatchPlan, heads: Map[SSP, Long]): Map[SSP, Long] =
    GroupingState.of(plan.state).fold(heads)(s => ExpansionHolds.cap(s.holds, plan.minBegins, heads))

  private def checkDue(): Boolean = {
    val now = nowMs()
    val due = lastCheckMs.forall(last => now - last >= options.checkIntervalMs)
    if (due) lastCheckMs = Some(now)
    due
  }

  private def record(mapping: TaskMapping): Unit =
    if (!written.contains(mapping)) {
      store.put(TaskMapping.StoreNamespace, storeKey, mapping.toJson)
      written = Some(mapping)
    }

  private def partitionCounts(): Map[String, Int] = {
    val counts = admin.partitionCounts(streams.toSet)
    streams.foreach { s =>
      if (!counts.contains(s)) throw StreamctlException(s"Stream '$s' does not exist on Kafka (option 'streams')")
    }
    counts
  }
}

object GroupingStep {
  /** The mapping an Offset carries: its tasks' SSPs, with the initial counts from its state (else its own counts). */
  private[spark] def inForce(plan: BatchPlan, state: Option[GroupingState]): TaskMapping = {
    val taskSsps = plan.begins.collect { case (t, ps) if ps.nonEmpty => t -> ps.keySet }
    val own = TaskMapping(Map.empty, taskSsps).partitionCounts
    val initial = state.fold(own)(s => own ++ s.initialPartitionCounts.filter { case (k, _) => own.contains(k) })
    TaskMapping(initial, taskSsps)
  }

  /**
   * Makes `plan` read `mapping` instead of `inForce`: (task, SSP) pairs that left are
   * dropped, new pairs begin at the SSP's position in another task or else at `oldest`,
   * partitions added to an already-read, non-broadcast stream are held (see
   * [[ExpansionHolds]]), and the state records the initial counts and the holds still needed.
   */
  private[spark] def adjust(plan: BatchPlan, inForce: TaskMapping, mapping: TaskMapping, holds: ExpansionHolds.Holds,
                            broadcastStreams: Set[String], oldest: Set[SSP] => Map[SSP, Long],
                            barriers: Set[SSP] => Map[SSP, Long]): BatchPlan = {
    val adjusted =
      if (mapping eq inForce) plan
      else {
        val positions = plan.minBegins
        val fresh = mapping.ssps.filterNot(positions.contains)
        val first = if (fresh.isEmpty) Map.empty[SSP, Long] else oldest(fresh)
        val begins: Map[TaskName, Map[SSP, Long]] = mapping.taskSsps.map { case (t, ssps) =>
          val had = plan.begins.getOrElse(t, Map.empty)
          t -> ssps.iterator.map { s =>
            s -> had.getOrElse(s, positions.getOrElse(s, first.getOrElse(s,
              throw StreamctlException(s"Kafka returned no first offset for stream '${s.stream}' partition ${s.partition}"))))
          }.toMap
        }
        plan.copy(begins = begins)
      }
    val grown = if (mapping eq inForce) Map.empty[SSP, TaskName] else mapping.addedSince(Some(inForce)).iterator.collect {
      case s if inForce.partitionCount(s.stream) > 0 && !broadcastStreams.contains(s.stream) => s -> mapping.tasksOf(s).head
    }.toMap
    val placed = ExpansionHolds.place(grown, adjusted.begins, inForce.sspTasks.contains, barriers)
    val all = holds ++ placed
    val still = if (all.isEmpty) all else ExpansionHolds.release(all, adjusted.minBegins)
    adjusted.withState(GroupingState.Key, GroupingState(mapping.initialPartitionCounts, still).toJson)
  }
}
