package streamctl.system

import java.util.concurrent.{Executors, RejectedExecutionException, TimeUnit}

import org.apache.kafka.common.errors.{
  GroupAuthorizationException,
  IllegalGenerationException,
  RebalanceInProgressException,
  UnknownMemberIdException
}
import org.slf4j.LoggerFactory

import streamctl.StreamctlException

/**
 * Commits a streaming query's positions to a consumer group after each batch, so that the tools a
 * Kafka team already runs (`kafka-consumer-groups --describe`, Burrow, lag exporters, vendors'
 * consoles) show its lag. For monitoring only: the query never reads the group back (its checkpoint
 * is where it resumes), and joins no group.
 *
 * `committed` is called once a batch committed (never ahead of the offset log) with, per partition,
 * the next offset to read (in real-time mode, `reported` also between batch ends): the batch's end,
 * which is past any transaction marker and control message, so a query that caught up shows 0
 * behind. The commit goes out on a thread of its own, latest positions first (an older set still
 * waiting is dropped), so a slow broker never holds up a batch. After [[close]] (the last batch's
 * report comes after its source stopped) `committed` sends on the caller's thread, with a client of
 * its own: call it from one that nothing else waits for. A failure (no ACL for the group, a group
 * with live members) is one WARN naming the group and the reason per episode: commits keep failing
 * without another until one succeeds (an INFO says so), and the next batch commits again.
 *
 * {{{
 * val committer = new GroupOffsetCommitter(params, "orders-etl", "query 'etl'")
 * committer.committed(Map(SSP.kafka("orders", 0) -> 42L))
 * committer.close()
 * }}}
 */
final class GroupOffsetCommitter(params: KafkaParams, val group: String, who: String)
    extends AutoCloseable {
  private val log = LoggerFactory.getLogger(classOf[GroupOffsetCommitter])
  /* The admin client, opened on first use; after close, a late commit (the last batch's report may
   * come after the source stopped) opens one of its own for that commit. Guarded by `clients`, with
   * `inUse` (a commit is sending with it) and `closed`: close never waits for a commit, which on a
   * broker that does not answer takes the API timeout, so the commit under way closes it instead. */
  private val clients = new Object
  private var adminRef: KafkaSystemAdmin = _
  private var inUse = false
  private var closed = false
  /* Each set of positions carries a number: two commits may race for the lock (the thread's and a
   * late one after close, or a thread that took an older set just before a newer one was taken),
   * and the group must never move back to an older batch's positions. Guarded by `this`. */
  private var lastCommitted = 0L
  /* What waits to be sent, with the batch end that reports are measured against: batch ends and
   * reports come on different threads, so both change it under this one lock. */
  private val waitingLock = new Object
  private var waiting = GroupOffsetCommitter.Waiting()
  private val thread = Executors.newSingleThreadExecutor { r =>
    val t = new Thread(r, s"streamctl-group-offsets-$group")
    t.setDaemon(true)
    t
  }
  @volatile private var failing: Option[String] = None

  /** The next offset to read per SSP, once the batch that read up to them committed. */
  def committed(next: Map[SSP, Long]): Unit = commit(_.batchEnded(next))

  /**
   * Real-time mode: where running readers stand, between two batch ends (a real-time batch may run
   * for minutes). Only SSPs past the last batch end move ([[GroupOffsetCommitter.Waiting]]). A
   * startpoint that moved the query back shows at the next batch end.
   */
  def reported(positions: Map[SSP, Long]): Unit = commit(_.reported(positions))

  private def commit(change: GroupOffsetCommitter.Waiting => GroupOffsetCommitter.Waiting): Unit = {
    val changed = waitingLock.synchronized {
      val before = waiting
      waiting = change(before)
      waiting ne before
    }
    if (changed)
      try thread.execute(() => commitPending())
      catch { case _: RejectedExecutionException => commitPending() }
  }

  private def commitPending(): Unit = {
    val taken = waitingLock.synchronized {
      val (next, left) = waiting.taken
      waiting = left
      next
    }
    taken.foreach { case (call, next) => send(call, next) }
  }

  private def send(call: Long, next: Map[SSP, Long]): Unit =
    try synchronized {
        if (call > lastCommitted) {
          withClient(_.commitGroupOffsets(group, next))
          lastCommitted = call
          if (failing.isDefined)
            log.info(s"The positions of $who are committed to consumer group '$group' again")
          failing = None
        }
      }
    catch {
      case e: StreamctlException =>
        val reason = GroupOffsetCommitter.reason(e)
        if (failing.isEmpty) log.warn(
          s"Could not commit the positions of $who to consumer group '$group' " +
            s"(option 'commitOffsets'), so monitoring shows them behind: $reason. The query goes on and commits again after " +
            "each batch, without another warning until a commit succeeds; the group is for monitoring only (the query " +
            "resumes from its checkpoint)"
        )
        else if (!failing.contains(reason))
          log.info(s"Committing to consumer group '$group' still fails, now because $reason")
        failing = Some(reason)
    }

  /* Runs `f` with the shared admin client, or once closed with one of its own; a close that came
   * while `f` ran left the shared one to be closed here. */
  private def withClient(f: KafkaSystemAdmin => Unit): Unit = {
    val shared = clients.synchronized {
      if (closed) None
      else {
        if (adminRef == null) adminRef = KafkaSystemAdmin(params)
        inUse = true
        Some(adminRef)
      }
    }
    shared match {
      case Some(admin) =>
        try f(admin)
        finally clients.synchronized { inUse = false; closable() }.foreach(_.close())
      case None =>
        val once = KafkaSystemAdmin(params)
        try f(once)
        finally once.close()
    }
  }

  // Guarded by `clients`: the client to close now (once closed, and no commit sends with it).
  private def closable(): Option[KafkaSystemAdmin] =
    if (!closed || inUse) None
    else {
      val admin = Option(adminRef)
      adminRef = null
      admin
    }

  /**
   * Waits a few seconds for the last commit, then closes the admin client; a commit still under way
   * then (a broker that does not answer) closes it once it ended, on the thread that commits, so
   * stopping a query never waits for the broker longer than that. On an interrupted thread (Spark
   * stops a query by interrupting its thread) it skips the wait and leaves the interrupt set for
   * the caller.
   */
  override def close(): Unit = {
    thread.shutdown()
    try thread.awaitTermination(5, TimeUnit.SECONDS)
    catch { case _: InterruptedException => Thread.currentThread().interrupt() }
    clients.synchronized { closed = true; closable() }.foreach(_.close())
  }
}

object GroupOffsetCommitter {

  /**
   * The positions waiting to be sent (`next`, numbered `call`: a later set has a higher number) and
   * the last batch end. The committer changes it under one lock, so a report is always measured
   * against the latest batch end: one measured against an earlier end and merged after a later one
   * would move the group back below the query's last batch (lag shown that is not there).
   */
  private[system] final case class Waiting(
      batchEnd: Map[SSP, Long] = Map.empty,
      next: Map[SSP, Long] = Map.empty,
      call: Long = 0L
  ) {

    /** A batch ended at `end`: it goes out, over any report still waiting. */
    def batchEnded(end: Map[SSP, Long]): Waiting = Waiting(end, next ++ end, call + 1)

    /**
     * Readers stand at `positions`: only SSPs past the last batch end go out, so a report that
     * comes after its batch ended never moves the group back.
     */
    def reported(positions: Map[SSP, Long]): Waiting = {
      val moved = ahead(positions, batchEnd)
      if (moved.isEmpty) this else copy(next = next ++ moved, call = call + 1)
    }

    /** The positions to send now with their number, if any; and what is left (nothing waiting). */
    def taken: (Option[(Long, Map[SSP, Long])], Waiting) =
      if (next.isEmpty) (None, this) else (Some(call -> next), copy(next = Map.empty))
  }

  /** The reported positions past the last batch end (an SSP it did not have is new: taken). */
  private[system] def ahead(reported: Map[SSP, Long], batchEnd: Map[SSP, Long]): Map[SSP, Long] =
    reported.filter { case (ssp, o) => batchEnd.get(ssp).forall(o > _) }

  /**
   * Why a commit failed, in an operator's words for the two usual causes (Kafka's own say "the
   * coordinator is not aware of this member" for a group with members).
   */
  private def reason(e: StreamctlException): String = e.getCause match {
    case _: UnknownMemberIdException | _: RebalanceInProgressException |
        _: IllegalGenerationException =>
      "the group has live members (another consumer uses this group id; Kafka commits for a group " +
        "only while it has none)"
    case c: GroupAuthorizationException =>
      s"not authorized for the group (it needs READ on the group): ${c.getMessage}"
    case null => e.getMessage
    case c => s"${c.getClass.getSimpleName}: ${c.getMessage}"
  }
}
