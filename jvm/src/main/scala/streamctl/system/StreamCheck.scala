package streamctl
package system

import java.util.concurrent.{CompletableFuture, ExecutionException, ExecutorService, Executors}

import streamctl.DaemonThreads

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
 * check.askAhead()  // real-time mode, as a batch ends: asks in the background if due...
 * check.ifDue()     // ...and the next boundary takes that answer
 * }}}
 */
final class StreamCheck(
    admin: SystemAdmin,
    subscription: Subscription,
    intervalMs: Long,
    nowMs: () => Long = () => System.nanoTime() / 1000000L
) {

  private var lastMs: Option[Long] = None
  // The answer [[askAhead]] asked for, and when it asked.
  private var ahead: Option[(Long, CompletableFuture[Map[String, StreamDescription]])] = None

  private def due: Boolean = lastMs.forall(last => nowMs() - last >= intervalMs)

  /** The streams as they are now if a check is due (or as [[askAhead]] found them), else None. */
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
   * Real-time mode, as a batch ends: if a check is due, asks in the background, and the next
   * [[ifDue]] (the next batch's beginning) takes the answer. Between two real-time batches Spark
   * writes its offset and commit logs, so the request is answered meanwhile instead of on the path
   * every record waits on; a stream that grows in that moment is seen at the check after.
   */
  def askAhead(): Unit = synchronized {
    if (ahead.isEmpty && due)
      ahead =
        Some(nowMs() -> CompletableFuture.supplyAsync(() => describe(), StreamCheck.background))
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
   * as it was.
   */
  def describe(): Map[String, StreamDescription] = subscription match {
    case Subscription.Matching(pattern) =>
      val streams = subscription.streams(admin)
      if (streams.isEmpty) throw streamctl.StreamctlException(
        s"No Kafka topic matches option 'subscribePattern' ($pattern); create one first (streamctl reads the partitions it can plan)"
      )
      admin.describeStreams(streams.toSet)
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

object StreamCheck {
  // Daemon threads for [[StreamCheck.askAhead]]: one metadata request per real-time batch per
  // query, so threads are few and idle ones go away.
  private lazy val background: ExecutorService =
    Executors.newCachedThreadPool(DaemonThreads.named("streamctl-stream-check"))
}
