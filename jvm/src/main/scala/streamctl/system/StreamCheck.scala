package streamctl.system

/**
 * Asks the system about the streams a source reads (partition counts and identities, in one
 * request) at most every `intervalMs`, and always the first time: the first planning after
 * a (re)start sees the streams as they are now. Partition expansion, recreated topics and
 * (for `subscribePattern`) new matching topics are all detected from its answer, so watching
 * for them costs nothing per batch.
 *
 * {{{
 * val check = new StreamCheck(admin, Subscription.Topics(Seq("orders")), intervalMs = 10000)
 * check.ifDue()   // Some(Map("orders" -> StreamDescription(4, Some("Rk7Hz..."))))
 * check.ifDue()   // None: asked less than 10 s ago
 * check.now()     // asks again at once
 * check.describe() // asks without moving the schedule
 * }}}
 */
final class StreamCheck(
    admin: SystemAdmin,
    subscription: Subscription,
    intervalMs: Long,
    nowMs: () => Long = () => System.nanoTime() / 1000000L) {

  private var lastMs: Option[Long] = None

  def ifDue(): Option[Map[String, StreamDescription]] = synchronized {
    if (lastMs.forall(last => nowMs() - last >= intervalMs)) Some(now()) else None
  }

  /** Asks now; the next [[ifDue]] is due an interval from now. */
  def now(): Map[String, StreamDescription] = synchronized {
    val d = describe()
    lastMs = Some(nowMs())
    d
  }

  /** Asks now, for a caller outside planning: the schedule, and so the next planning's check, stays as it was. */
  def describe(): Map[String, StreamDescription] = subscription match {
    case Subscription.Matching(pattern) =>
      val streams = subscription.streams(admin)
      if (streams.isEmpty) throw streamctl.StreamctlException(
        s"No Kafka topic matches option 'subscribePattern' ($pattern); create one first (streamctl reads the partitions it can plan)")
      admin.describeStreams(streams.toSet)
    case _ =>
      val described = admin.describeExisting(subscription.streams(admin), subscription.describe)
      subscription.only.foreach(_.groupMap(_.stream)(_.partition).toSeq.sortBy(_._1).foreach { case (stream, ps) =>
        SystemAdmin.checkPartitions(stream, ps.toSeq.sorted, Some(described(stream).partitions), subscription.describe)
      })
      described
  }
}
