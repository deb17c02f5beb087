package streamctl.grouper

import org.slf4j.LoggerFactory

import streamctl.StreamctlException
import streamctl.metadata.{MetadataStore, StoreLayout}
import streamctl.plan.{BatchPlan, PlanningContext, PlanningStep, SourcePosition, SourceState}
import streamctl.system.{SSP, StreamDescription, SystemAdmin, TaskName}

/**
 * Planning step: which task reads which SSP, and where a newly read SSP begins.
 *
 * The mapping in force is the one in the batch's start offset (the key set of its tasks, plus
 * [[GroupingState]]). When the planner asked Kafka about the streams
 * ([[streamctl.system.StreamCheck]]: at most every `partition.check.interval`, and always at the
 * first planning after a (re)start), the step lets [[Grouping]] derive the new mapping from the
 * partition counts: partitions added to a stream join the task of their origin partition (no task
 * is created), a shrunk stream or a growth the expansion algorithm refuses fails the query. SSPs a
 * task did not read before begin at the position another task has for them, or else at their first
 * (oldest) offset, so records written to a new partition right after the expansion are read. New
 * partitions are held back (the plan's `held`) until the older partitions of their task have passed
 * the point the growth was seen ([[ExpansionHolds]]).
 *
 * The metadata store records the mapping ([[StoreLayout]]: namespace `grouper`, key
 * `mapping-<source>`) whenever this run computes one that differs from what it last wrote. On a
 * first run the stored mapping is the previous one, so a query started with a fresh checkpoint and
 * the same `metadata.store.path` keeps its task names. Afterwards the offset rules: a store written
 * for a batch that never reached the offset log is simply rewritten, and one that cannot be read
 * any more (corrupted) is rewritten too, with a warning naming it.
 *
 * `only` (Spark's `assign`) restricts the mapping to the given SSPs, once, at the first batch: the
 * grouper groups them, and the mapping never changes afterwards (partitions added later are not
 * read, as with Spark's `assign`).
 *
 * {{{
 * val step = new GroupingStep(options.grouping, admin, store, StoreLayout.Source("0").mappingKey)
 * val first = step.initialPosition(step.initial(check.now()), startOffsets)
 * val plan = step(BatchPlan(previous), PlanningContext(described = check.ifDue()))
 * }}}
 */
final class GroupingStep(
    config: GrouperConfig,
    admin: SystemAdmin,
    store: => MetadataStore,
    storeKey: String,
    only: Option[Set[SSP]] = None
) extends PlanningStep {

  private val what = s"metadata store namespace '${StoreLayout.MappingNamespace}' key '$storeKey'"
  private var written: Option[TaskMapping] = None
  // The partition counts this run last derived a mapping from, and that mapping.
  @volatile private var lastDerived: Option[(Map[String, Int], TaskMapping)] = None

  /**
   * The mapping for a query's first batch: the stored one (if any) brought up to the streams as
   * `described`.
   */
  def initial(described: Map[String, StreamDescription]): TaskMapping = {
    val previous =
      store.get(StoreLayout.MappingNamespace, storeKey).map(TaskMapping.fromJson(_, what))
    val grouped = Grouping(config, previous, counts(described))
    val mapping = only.fold(grouped)(keep =>
      TaskMapping(
        grouped.initialPartitionCounts,
        grouped.taskSsps.map { case (t, ssps) => t -> ssps.filter(keep) }.filter(_._2.nonEmpty)
      )
    )
    record(mapping)
    mapping
  }

  /** The first position: every task's SSPs at `starts`, with the grouping state. */
  def initialPosition(mapping: TaskMapping, starts: Map[SSP, Long]): SourcePosition =
    SourcePosition(
      mapping.taskSsps.map { case (t, ssps) => t -> ssps.iterator.map(s => s -> starts(s)).toMap },
      SourceState.empty.updated(
        GroupingState.Codec,
        GroupingState(mapping.initialPartitionCounts, Map.empty)
      )
    )

  /**
   * Adjusts `plan` to the mapping in force, and to the streams' partition counts when the planner
   * asked Kafka about them (`ctx.described`). The `Trigger.AvailableNow` target caps the barriers
   * of new holds: nothing past it is read in this run anyway.
   */
  override def apply(plan: BatchPlan, ctx: PlanningContext): BatchPlan = {
    val state = plan.state(GroupingState.Codec)
    ctx.described.filter(_ => only.isEmpty).map(counts) match {
      // Streams described as when this run last derived the mapping, which is still the one in
      // force: nothing to derive again (checked every batch at thousands of partitions, where a
      // batch outlasts `partition.check.interval`).
      case Some(c) if lastDerived.exists { case (from, m) =>
            from == c && GroupingStep.inForce(plan, state) == m
          } =>
        GroupingStep.keep(plan, state)
      case Some(c) => regroup(plan, state, c, ctx)
      case None => GroupingStep.keep(plan, state)
    }
  }

  private def regroup(
      plan: BatchPlan,
      state: GroupingState,
      partitionCounts: Map[String, Int],
      ctx: PlanningContext
  ): BatchPlan = {
    val inForce = GroupingStep.inForce(plan, state)
    val mapping = Grouping(config, Some(inForce), partitionCounts)
    record(mapping)
    lastDerived = Some(partitionCounts -> mapping)
    /* The heads as of the growth, also for a Trigger.AvailableNow run whose target is short of
     * them: the records between its target and the head were written before the growth too, and the
     * run after reads them, before the new partitions. */
    def barriers(ssps: Set[SSP]): Map[SSP, Long] = admin.upcomingOffsets(ssps)
    val adjusted = GroupingStep.adjust(
      plan,
      inForce,
      mapping,
      state.holds,
      config.broadcastStreams,
      admin.oldestOffsets,
      barriers
    )
    adjusted.copy(held = adjusted.state(GroupingState.Codec).holds.keySet)
  }

  private def record(mapping: TaskMapping): Unit =
    if (!written.contains(mapping)) {
      if (written.isEmpty) warnIfUnreadable()
      store.put(StoreLayout.MappingNamespace, storeKey, mapping.toJson)
      written = Some(mapping)
    }

  /**
   * The first write of a run replaces what an earlier run left. A mapping that differs is expected
   * (the Offset rules); one that cannot be read means the store was damaged, which the user should
   * hear of even though the offset log repairs it.
   */
  private def warnIfUnreadable(): Unit =
    try store.get(StoreLayout.MappingNamespace, storeKey).foreach(TaskMapping.fromJson(_, what))
    catch {
      case e: StreamctlException =>
        GroupingStep.log.warn(
          s"The task mapping at ${store.describe(StoreLayout.MappingNamespace, storeKey)} cannot be read " +
            s"(${e.getMessage}); it is rewritten from the query's offset log, which holds the mapping in force"
        )
    }

  private def counts(described: Map[String, StreamDescription]): Map[String, Int] =
    described.map { case (s, d) => s -> d.partitions }
}

object GroupingStep {
  private val log = LoggerFactory.getLogger(classOf[GroupingStep])

  /**
   * The mapping an offset carries: its tasks' SSPs, with the initial counts from its state (else
   * its own counts).
   */
  private[grouper] def inForce(plan: BatchPlan, state: GroupingState): TaskMapping = {
    val taskSsps = plan.begins.collect { case (t, ps) if ps.nonEmpty => t -> ps.keySet }
    TaskMapping(initialCounts(TaskMapping(Map.empty, taskSsps).partitionCounts, state), taskSsps)
  }

  private def initialCounts(own: Map[String, Int], state: GroupingState): Map[String, Int] =
    own ++ state.initialPartitionCounts.filter { case (k, _) => own.contains(k) }

  /**
   * What [[adjust]] does when the mapping in force stays (the streams were not asked about this
   * batch), without building that mapping: the batches between two checks of the streams, i.e.
   * nearly every batch, pass over the task SSPs once here.
   */
  private[grouper] def keep(plan: BatchPlan, state: GroupingState): BatchPlan = {
    val own = scala.collection.mutable.HashMap.empty[String, Int]
    plan.begins.valuesIterator.foreach(_.keysIterator.foreach { s =>
      if (own.get(s.stream).forall(_ <= s.partition)) own.update(s.stream, s.partition + 1)
    })
    val still =
      if (state.holds.isEmpty) state.holds else ExpansionHolds.release(state.holds, plan.minBegins)
    plan.withState(_.updated(
      GroupingState.Codec,
      GroupingState(initialCounts(own.toMap, state), still)
    )).copy(held = still.keySet)
  }

  /**
   * Makes `plan` read `mapping` instead of `inForce`: (task, SSP) pairs that left are dropped, new
   * pairs begin at the SSP's position in another task or else at `oldest`, partitions added to an
   * already-read, non-broadcast stream are held (see [[ExpansionHolds]]), and the state records the
   * initial counts and the holds still needed.
   */
  private[grouper] def adjust(
      plan: BatchPlan,
      inForce: TaskMapping,
      mapping: TaskMapping,
      holds: ExpansionHolds.Holds,
      broadcastStreams: Set[String],
      oldest: Set[SSP] => Map[SSP, Long],
      barriers: Set[SSP] => Map[SSP, Long]
  ): BatchPlan = {
    val adjusted =
      if (mapping eq inForce) plan
      else {
        val positions = plan.minBegins
        val fresh = mapping.ssps.filterNot(positions.contains)
        val first = if (fresh.isEmpty) Map.empty[SSP, Long] else oldest(fresh)
        val begins: Map[TaskName, Map[SSP, Long]] = mapping.taskSsps.map { case (t, ssps) =>
          val had = plan.begins.getOrElse(t, Map.empty)
          t -> ssps.iterator.map { s =>
            s -> had.getOrElse(
              s,
              positions.getOrElse(
                s,
                first.getOrElse(
                  s,
                  throw StreamctlException(
                    s"Kafka returned no first offset for stream '${s.stream}' partition ${s.partition}"
                  )
                )
              )
            )
          }.toMap
        }
        plan.copy(begins = begins)
      }
    val grown = if (mapping eq inForce) Map.empty[SSP, TaskName]
    else mapping.addedSince(Some(inForce)).iterator.collect {
      case s if inForce.partitionCount(s.stream) > 0 && !broadcastStreams.contains(s.stream) =>
        s -> mapping.tasksOf(s).head
    }.toMap
    val placed = ExpansionHolds.place(grown, adjusted.begins, inForce.sspTasks.contains, barriers)
    val all = holds ++ placed
    val still = if (all.isEmpty) all else ExpansionHolds.release(all, adjusted.minBegins)
    adjusted.withState(_.updated(
      GroupingState.Codec,
      GroupingState(mapping.initialPartitionCounts, still)
    ))
  }
}
