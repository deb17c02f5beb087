package streamctl
package system

import java.util.concurrent.{CompletableFuture, ExecutionException, Executor}

/**
 * Asks the system about the streams a source reads (partition counts and identities, in one
 * request) at most every `intervalMs`, and always the first time: the first planning after a
 * (re)start sees the streams as they are now. Partition expansion, recreated topics and (for
 * `subscribePattern`) new matching topics are all detected from its answer, so watching for them
 * costs nothing per batch.
 *
 * {{{
 * val check = new StreamCheck(admin, Subscription.Topics(Seq("orders")), intervalMs = 10000)
 * check.ifDue()   // Some(Map("orders" -> StreamDescription(4, Some("Rk7Hz..."))))
 * check.ifDue()   // None: asked less than 10 s ago
 * check.now()     // asks again at once
 * check.describe() // asks without moving the schedule
 * check.askAhead(5000) // as a batch ends: asks in the background if due within 5 s...
 * check.ifDue()     // ...and the next boundary takes that answer
 * }}}
 */
final class StreamCheck(
    admin: SystemAdmin,
    subscription: Subscription,
    intervalMs: Long,
    nowMs: () => Long = () => System.nanoTime() / 1000000L,
    background: Executor = InBackground.executor
) {

  private var lastMs: Option[Long] = None
  // The answer [[askAhead]] asked for, and when it asked.
  private var ahead: Option[(Long, CompletableFuture[Map[String, StreamDescription]])] = None

  private def due: Boolean = dueWithin(0L)
  private def dueWithin(ms: Long): Boolean =
    lastMs.forall(last => nowMs() + ms - last >= intervalMs)

  /**
   * The streams as they are now if a check is due, or as [[askAhead]] found them (asked since the
   * previous planning), else None.
   */
  def ifDue(): Option[Map[String, StreamDescription]] = synchronized {
    ahead match {
      case Some((askedMs, answer)) =>
        ahead = None
        try {
          val d = answer.get()
          lastMs = Some(askedMs)
          Some(d)
        } catch {
          // Asked again here, so that the error is raised where the planning would have met it.
          case _: ExecutionException => Some(now())
        }
      case None => if (due) Some(now()) else None
    }
  }

  /**
   * As a batch ends: if a check is due within `withinMs` (when the next planning is expected), asks
   * in the background, and the next [[ifDue]] (the next batch's planning) takes the answer, which
   * at 4,096 partitions (a round trip and about 100 ms of parsing) the planning would otherwise
   * wait for. A real-time batch asks as it ends, while Spark logs it (the next one begins at once);
   * a micro-batch as Spark commits the batch before it to the source, which Spark does right after
   * planning the next one, so the answer comes while that batch runs and the next planning is about
   * a batch away. A stream that grows after the answer is seen at the check after: up to a batch
   * (or a trigger interval) later than when each planning asked for itself.
   */
  def askAhead(withinMs: Long = 0L): Unit = synchronized {
    if (ahead.isEmpty && dueWithin(withinMs))
      ahead =
        Some(nowMs() -> CompletableFuture.supplyAsync(() => describe(), background))
  }

  /** Asks now; the next [[ifDue]] is due an interval from now. */
  def now(): Map[String, StreamDescription] = synchronized {
    ahead = None
    val d = describe()
    lastMs = Some(nowMs())
    d
  }

  /**
   * Asks now, for a caller outside planning: the schedule, and so the next planning's check, stays
   * as it was. For `subscribePattern`, a topic deleted between listing the matching topics and
   * describing them is left out (they are listed again once).
   */
  def describe(): Map[String, StreamDescription] = subscription match {
    case Subscription.Matching(pattern) =>
      def matching(): Set[String] = {
        val streams = subscription.streams(admin)
        if (streams.isEmpty) throw streamctl.StreamctlException(
          s"No Kafka topic matches option 'subscribePattern' ($pattern); create one first (streamctl reads the partitions it can plan)"
        )
        streams.toSet
      }
      try admin.describeStreams(matching())
      catch {
        /* A matching topic deleted between the listing and the describing: the listing was out of
         * date, not the option wrong. Listed again once, without it; planning then sees it gone as
         * any deleted stream of a pattern (dataloss.DataLossChecks.recreations). */
        case e: StreamctlException if SystemAdmin.streamGone(e) =>
          admin.describeStreams(matching())
      }
    case _ =>
      val described = admin.describeExisting(subscription.streams(admin), subscription.describe)
      subscription.only.foreach(_.groupMap(_.stream)(_.partition).toSeq.sortBy(_._1).foreach {
        case (stream, ps) =>
          SystemAdmin.checkPartitions(
            stream,
            ps.toSeq.sorted,
            Some(described(stream).partitions),
            subscription.describe
          )
      })
      described
  }
}
