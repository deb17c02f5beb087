package streamctl
package startpoint

import org.slf4j.LoggerFactory

import streamctl.StreamctlException
import streamctl.metadata.{FileSystemMetadataStore, MetadataStore, StoreLayout}
import streamctl.plan.{BatchPlan, PlanningContext, PlanningStep, SourcePosition}
import streamctl.system.{SSP, SystemAdmin, TaskName}

/**
 * Planning step: startpoints. One instance lives as long as the query run (Spark builds a new
 * source, hence a new step, at every start), which is what "at the first planning after a
 * (re)start" means here.
 *
 * At the first planning:
 *   1. the startpoints the previous batch (`start`, already committed) applied are deleted, unless
 *      rewritten since: this is how a restart after a crash between planning and commit recognises
 *      that the replayed batch already applied them;
 *   2. every stored startpoint must belong to the query and resolve (else the query does not start,
 *      and the store is left as it was); then, the store read again and found unchanged (else
 *      resolved again), SSP-only startpoints are fanned out to every task reading the SSP
 *      (task-level ones win);
 *   3. each task's SSP begins at its resolved offset ([[BatchPlan.begin]], so the offset log's
 *      `starts` makes a replay read the same records), and the batch's end offset records what it
 *      applied ([[AppliedStartpoints]]).
 * Later plannings only drop that record from the next offset. Startpoints written while the query
 * runs wait for the next restart: the store is read once per run, never per batch.
 *
 * What step 2 resolved is also kept in the store (`resolvedKey`) until the batch that applies it
 * commits. Spark logs a micro-batch before running it, but a real-time batch only as it ends: a run
 * that dies within that batch resolves its startpoints again at the next start, and `upcoming` (or
 * a timestamp's, or a user resolver's answer) would then begin later than the records the dead
 * batch read and output. The next start applies the kept resolution instead, as long as the store
 * holds the same startpoints for the same tasks.
 *
 * Deletion happens after the applying batch committed: in [[committed]] (Spark's `commit(end)`) and
 * again, idempotently, when the next batch is planned from it. Both need Spark to log a batch
 * before it plans the next, so a query whose engine logs in the background (`logsInBackground`) is
 * refused while startpoints wait, before anything is written. An engine that cannot be read (None:
 * a Spark whose internals moved, a query not found) is taken as logging in line, with a WARN:
 * refusing would leave the user no way to apply startpoints there, since no option makes the engine
 * readable (the writer's `asyncProgressTrackingEnabled` is only held by it), and logging in the
 * background is rare (that option, or Spark 4.3's choice for some real-time queries).
 *
 * {{{
 * val step = new StartpointStep(() => store, admin, options.streams, storePath)
 * val plan = step(BatchPlan(previous), ctx) // in latestOffset(start, limit)
 * step.committed(end)                       // in commit(end)
 * }}}
 */
final class StartpointStep(
    store: () => MetadataStore,
    admin: SystemAdmin,
    streams: Seq[String],
    storeLocation: String,
    customResolvers: Seq[CustomStartpointResolver] = Nil,
    logsInBackground: () => Option[Boolean] = () => Some(false),
    resolvedKey: Option[String] = None
) extends PlanningStep {
  import StartpointStep._

  private var firstPlanningDone = false
  private var cleaned: Option[AppliedStartpoints] = None

  private lazy val manager = new StartpointManager(store())

  override def apply(plan: BatchPlan, ctx: PlanningContext): BatchPlan = synchronized {
    removeApplied(plan.previous.state(AppliedStartpoints.Codec), failOnError = true)
    val cleared = plan.withState(_.updated(AppliedStartpoints.Codec, AppliedStartpoints.empty))
    if (firstPlanningDone) return cleared
    store() match {
      case fs: FileSystemMetadataStore =>
        fs.ensureWritable() // fail at start, not when deleting after the first batch
      case _ =>
    }
    val grouping = cleared.begins.map { case (task, ssps) => task -> ssps.keySet }
    checkAllAssigned(grouping, ctx)
    // Resolved before fan-out writes anything, so a refused startpoint leaves the store exactly as
    // the user wrote it, and the error names the key they wrote.
    def resolve(plan: FanOutPlan) = explained("cannot be resolved")(new StartpointResolver(
      admin,
      customResolvers
    ).resolveForTasks(
      plan.result.startpoints,
      k => s"key '${plan.origin(k).storeKey}'"
    ))
    def read() = explained("cannot be read")(manager.planFanOut(grouping))
    /* Resolving asks Kafka (and user resolvers), which takes a while: a key rewritten meanwhile
     * must not be deleted unapplied, nor a task-level one written meanwhile overwritten by a copy.
     * Before fan-out writes, the store is read again, and resolved again until it held still. */
    @scala.annotation.tailrec
    def settled(plan: FanOutPlan, reads: Int): (FanOutPlan, Map[(SSP, TaskName), Resolution]) = {
      val resolved = resolve(plan)
      lazy val again = read()
      // Task-level keys only (nothing to copy) are read again too: a rewritten one would else be
      // applied as it was and again, rewritten, at a later start.
      if ((plan.copies.isEmpty && plan.result.startpoints.isEmpty) || again == plan)
        (plan, resolved)
      else if (reads == MaxReads) throw StreamctlException(
        s"The startpoints in the metadata store at $storeLocation changed each of the $MaxReads times the query read " +
          "them as it started, so it does not start; start it again once they are written"
      )
      else settled(again, reads + 1)
    }
    val (fanOut, fresh) = settled(read(), 1)
    val resolved = keptOrFresh(fresh)
    if (resolved.nonEmpty) logsInBackground() match {
      case Some(true) => throw StreamctlException(
          s"The metadata store at $storeLocation holds startpoints for this query, which writes its offset and commit " +
            "logs in the background (Spark's asynchronous progress tracking, its default for a stateless real-time " +
            "query writing to Kafka or foreach): Spark then plans a batch before the ones before it are logged, and " +
            "may log only some of them, so the batch that applies a startpoint could be lost or the startpoint " +
            "applied twice. Start this run with option 'asyncProgressTrackingEnabled' set to false on the query's " +
            s"writeStream (the next run can turn it on again); the startpoints wait in the store.\n$Fix"
        )
      case Some(false) =>
      case None => log.warn(
          s"Applying the startpoints in the metadata store at $storeLocation without knowing whether this query " +
            "writes its offset and commit logs in the background (this Spark's query engine could not be read): " +
            "if it does (option 'asyncProgressTrackingEnabled', or Spark's default for a stateless real-time query " +
            "writing to Kafka or foreach), the batch that applies them could be lost or a startpoint applied twice; " +
            "such a query must apply startpoints in a run with that option set to false"
        )
    }
    explained("cannot be written")(manager.applyFanOut(fanOut))
    if (resolved.nonEmpty) resolvedKey.foreach(k =>
      explained("cannot be written")(store().put(
        StoreLayout.ResolvedNamespace,
        k,
        Json.write(AppliedStartpoints.Codec.write(AppliedStartpoints(resolved)))
      ))
    )
    firstPlanningDone = true
    if (resolved.isEmpty) return cleared
    report(resolved)
    val moved = resolved.foldLeft(cleared) { case (p, ((ssp, task), r)) =>
      p.begin(task, ssp, r.offset)
    }
    moved.withState(_.updated(AppliedStartpoints.Codec, AppliedStartpoints(resolved)))
  }

  /** Spark committed the batch that ends at `end`: the startpoints it applied are done. */
  override def committed(end: SourcePosition): Unit = synchronized {
    // A failure here is retried when the next batch is planned from `end`; failing the
    // query for it would only delay that.
    removeApplied(end.state(AppliedStartpoints.Codec), failOnError = false)
  }

  /* `fresh`, unless the store keeps a resolution of exactly these startpoints for exactly these
   * tasks: made by a run that died before the batch applying it was logged (a real-time batch).
   * Beginning there again reads what that batch read; anything else would skip or repeat records. */
  private def keptOrFresh(
      fresh: Map[(SSP, TaskName), Resolution]
  ): Map[(SSP, TaskName), Resolution] =
    resolvedKey.flatMap(k => store().get(StoreLayout.ResolvedNamespace, k).map(k -> _)) match {
      case None => fresh
      case Some((k, text)) =>
        val what =
          s"the resolved startpoints in ${store().describe(StoreLayout.ResolvedNamespace, k)}"
        val kept =
          try Some(AppliedStartpoints.Codec.read(Json.parse(text, what), what))
          catch {
            case e: StreamctlException =>
              log.warn(s"Resolving the startpoints again: ${e.getMessage}"); None
          }
        kept.filter(_.startpoints == fresh.map { case (key, r) => key -> r.startpoint }) match {
          case Some(same) if fresh.nonEmpty =>
            log.info(
              s"Applying the startpoints as a run that stopped before its first batch was logged resolved them ($what)"
            )
            same.applied
          case _ => fresh
        }
    }

  private def removeApplied(applied: AppliedStartpoints, failOnError: Boolean): Unit =
    if (!applied.isEmpty && !cleaned.contains(applied)) {
      try {
        resolvedKey.foreach(store().delete(StoreLayout.ResolvedNamespace, _))
        val kept = manager.removeFannedOut(applied.startpoints)
        kept.toSeq.sorted.foreach { case (ssp, task) =>
          log.info(s"Kept the startpoint at key '${StartpointKey(ssp, task).storeKey}': it was rewritten after the batch that applied the old one; " +
            "it applies at the next restart")
        }
        cleaned = Some(applied)
      } catch {
        case e: StreamctlException if !failOnError =>
          log.warn(
            s"Could not delete applied startpoints from the metadata store at $storeLocation yet (retried at the next batch): ${e.getMessage}"
          )
      }
    }

  private def explained[T](what: String)(body: => T): T =
    try body
    catch {
      case e: StreamctlException => throw StreamctlException(
          s"The startpoints in the metadata store at $storeLocation $what, so the query does not start. ${e.getMessage}\n$Fix",
          e
        )
    }

  /**
   * A startpoint no current task reads is a mistake (typo, wrong checkpoint); it must not wait
   * silently. Checked from the keys alone, before fan-out writes anything, so a refused start
   * leaves the store exactly as the user wrote it.
   */
  private def checkAllAssigned(grouping: Map[TaskName, Set[SSP]], ctx: PlanningContext): Unit = {
    val readers: Map[SSP, Set[TaskName]] = grouping.toSeq.flatMap { case (t, ssps) =>
      ssps.map(_ -> t)
    }.groupMap(_._1)(_._2).map {
      case (ssp, tasks) => ssp -> tasks.toSet
    }
    val unassigned = explained("cannot be read")(
      store().keys(StoreLayout.StartpointsNamespace).map(StartpointKey.parse)
    ).filter {
      case StartpointKey(ssp, None) => !readers.contains(ssp)
      case StartpointKey(ssp, Some(task)) => !readers.get(ssp).exists(_.contains(task))
    }
    if (unassigned.nonEmpty) {
      val read = grouping.values.flatten.groupMap(_.stream)(_.partition)
      // A subscribePattern query names no streams: it reads what its grouping and Kafka hold.
      val reads = (streams ++ read.keys ++ ctx.described.fold(Seq.empty[String])(_.keys.toSeq))
        .distinct.sorted
      // What Kafka has (the first planning asked it); a partition it has may still be one no
      // task reads (option 'assign', or an expansion not yet grouped).
      lazy val counts: Map[String, Int] = ctx.described.map(_.map { case (s, d) =>
        s -> d.partitions
      }).getOrElse(
        try admin.partitionCounts(unassigned.map(_.ssp.stream).filter(reads.contains).toSet)
        catch { case _: Exception => Map.empty[String, Int] }
      )
      def why(key: StartpointKey): String = {
        val ssp = key.ssp
        val reason =
          if (!reads.contains(ssp.stream))
            s"this query does not read stream '${ssp.stream}' (it reads ${reads.map(n => s"'$n'").mkString(", ")}; " +
              "a query with several streamctl sources needs option 'metadata.store.path' on each, one store per source)"
          else readers.get(ssp) match {
            case None =>
              val count = counts.get(ssp.stream)
              if (!SystemAdmin.exists(ssp.partition, count)) SystemAdmin.noSuchPartition(
                ssp.stream,
                ssp.partition,
                count,
                "a stored startpoint"
              ).getMessage
              else
                s"no task of this query reads partition ${ssp.partition} of stream '${ssp.stream}' " +
                  s"(it reads ${read.get(ssp.stream).fold("none")(_.toSeq.sorted.mkString(", "))})"
            case Some(tasks) =>
              s"task '${key.task.map(_.name).getOrElse(
                  ""
                )}' does not read it (read by ${tasks.toSeq.sorted.map(t => s"'$t'").mkString(", ")})"
          }
        val what =
          try manager.read(key).fold("deleted meanwhile")(_.describe)
          catch { case _: StreamctlException => "corrupt" }
        s"key '${key.storeKey}' ($what): $reason"
      }
      throw StreamctlException(
        s"The metadata store at $storeLocation holds startpoints this query cannot apply, so it does not start:\n  " +
          unassigned.take(MaxListed).map(why).mkString("\n  ") +
          (if (unassigned.size > MaxListed) s"\n  ... and ${unassigned.size - MaxListed} more"
           else "") + s"\n$Fix"
      )
    }
  }

  private def report(resolved: Map[(SSP, TaskName), Resolution]): Unit = {
    val sorted = resolved.toSeq.sortBy(_._1)
    sorted.take(MaxListed).foreach { case ((_, task), r) =>
      val line = s"Startpoint applied for task '$task': ${r.describe}"
      if (r.beyondData) log.warn(line) else log.info(line)
    }
    if (sorted.size > MaxListed)
      log.info(s"... and ${sorted.size - MaxListed} more startpoints applied")
  }
}

object StartpointStep {
  private val log = LoggerFactory.getLogger(classOf[StartpointStep])
  private val MaxListed = 20
  private val MaxReads = 3
  private val Fix =
    "See them with 'python -m streamctl startpoints list --checkpoint <query checkpoint>'; " +
      "replace one with 'startpoints set', remove one with 'startpoints delete'"
}
