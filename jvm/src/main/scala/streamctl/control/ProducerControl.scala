package streamctl.control

/**
 * The sending side of in-band control for one producer of one intermediate stream: which control
 * messages go to which partitions, and when. The I/O (asking Kafka for the partition count,
 * sending) is the [[ProducerControl.Wire]]'s; state moves on only after a send returned, so a
 * failed send is attempted again next time.
 *
 * Rules:
 *   - Messages go to every partition the stream has when they are sent (asked at each send), after
 *     the data they speak for. When the stream grew, the partitions that never got the producer's
 *     current status (its latest watermark, or its idle message) get it at the next commit (idle:
 *     at the next idle check), even when nothing else is sent.
 *   - A watermark goes out after a batch commits, only when it advanced.
 *   - Idle: with an idle timeout, a producer that wrote no record for that long (no batch in
 *     flight) sends an idle message, carrying its latest watermark if it has one; while idle it
 *     checks for new partitions once per timeout. Before the next batch writes anything it sends an
 *     active message to every partition: data messages carry no producer name, so this is the only
 *     way readers learn it is back. A new run starts as "maybe idle" (a previous run may have left
 *     readers counting it idle): its first batch starts with an active message, and it declares
 *     itself idle after the timeout if no batch writes. A run that finishes without ending the
 *     stream (a scheduled `Trigger.AvailableNow` run) declares itself idle as it finishes.
 *   - End-of-stream: the watermark if it advanced, then end-of-stream, to every partition. It may
 *     be sent again (a retry after a failed send); readers count a producer once. It says how many
 *     partitions it went to, never fewer than any batch of the run wrote to (a broker's metadata
 *     can lag another's): a reader counts the producer as ended on partitions added after that,
 *     which never get a message from it.
 *
 * Not thread-safe: the caller serialises calls, holding one lock around each call and its sends, so
 * that an idle message can never slip between an active message and the data that follows it.
 *
 * {{{
 * val control = new ProducerControl(ControlEncoder.forProducer("by_user", 1), idleTimeoutMs = Some(60000), startMs = now, wire)
 * control.batchStarted()                                            // before the writers run
 * control.batchCommitted(now, wroteData = true, watermark = Some(w)) // after they committed
 * control.tick(now)                                                 // at control.nextCheckMs
 * control.endOfStream(watermark = Some(w))
 * }}}
 */
final class ProducerControl(
    val messages: ControlEncoder,
    val idleTimeoutMs: Option[Long],
    startMs: Long,
    wire: ProducerControl.Wire
) {

  idleTimeoutMs.foreach(t => require(t > 0, s"idle timeout must be positive, not $t ms"))

  private var lastWatermark: Option[Long] = None

  /**
   * Partitions [0, covered) have the current status: the idle message while idle, else
   * `lastWatermark`.
   */
  private var covered = 0

  /** Readers may count this producer as idle (it said so, or a previous run may have). */
  private var idle = idleTimeoutMs.isDefined
  private var saidIdle = false
  private var inFlight = false
  private var lastDataMs = startMs
  private var lastCheckMs = startMs
  // The partition count asked for during the running batch (0: not asked yet). Its writers
  // write only these partitions ([[batchPartitionCount]]), so a real-time batch's watermarks
  // need not ask again each interval; the commit asks afresh (new partitions catch up there).
  private var batchPartitions = 0
  // Real-time mode: the count the last commit asked, for the batch Spark starts right after it.
  private var carried = 0
  // The most partitions a batch of this run was told the stream has.
  private var written = 0

  /** A batch is about to write (on the driver, before its writers start). */
  def batchStarted(): Unit = {
    inFlight = true
    batchPartitions = carried
    carried = 0
    if (idle) {
      val n = batchPartitionCount()
      wire.send(messages.active(lastWatermark), 0 until n, "active")
      idle = false
      saidIdle = false
      covered = if (lastWatermark.isDefined) n else 0
    }
  }

  /**
   * The stream's partition count for the running batch, asked at most once per batch: its writers
   * spread keyed records over exactly these partitions and its real-time watermarks go to the same
   * ones. A stream that grew is seen at the next batch (and by the commit's messages).
   */
  def batchPartitionCount(): Int = {
    if (batchPartitions == 0) batchPartitions = wire.partitions()
    written = math.max(written, batchPartitions)
    batchPartitions
  }

  /**
   * The batch's writers committed; `watermark` is the producer's watermark after it. In real-time
   * mode (`realTime`) the next batch starts as soon as Spark has logged this one, so a partition
   * count asked here also serves the next batch's writers: one request per batch boundary instead
   * of two, on the path every record waits on. A stream that grows in the moment between is seen
   * one batch later.
   */
  def batchCommitted(
      nowMs: Long,
      wroteData: Boolean,
      watermark: Option[Long],
      realTime: Boolean = false
  ): Unit = {
    inFlight = false
    if (wroteData) lastDataMs = nowMs
    lazy val n = {
      val asked = wire.partitions()
      if (realTime) carried = asked
      asked
    }
    sendWatermark(watermark, n)
    if (idleDue(nowMs)) sayIdle(nowMs, n)
  }

  /**
   * Real-time mode, at each watermark interval while a batch writes: sends `watermark` if it
   * advanced (the data it speaks for was flushed before it became the producer's watermark).
   */
  def watermarkDue(watermark: Option[Long]): Unit = watermark match {
    case Some(w) if lastWatermark.forall(w > _) => sendWatermark(watermark, batchPartitionCount())
    case _ =>
  }

  /** The batch failed: nothing is in flight any more. */
  def batchAborted(): Unit = inFlight = false

  /** The idle check, due at [[nextCheckMs]]. */
  def tick(nowMs: Long): Unit =
    if (!inFlight && idleTimeoutMs.isDefined) {
      if (saidIdle) {
        lastCheckMs = nowMs
        val n = wire.partitions()
        if (n > covered) {
          wire.send(messages.idle(lastWatermark), covered until n, "idle")
          covered = n
        }
      } else if (idleDue(nowMs)) sayIdle(nowMs, wire.partitions())
    }

  /**
   * The run finished without ending the stream (a scheduled `Trigger.AvailableNow` run): it writes
   * nothing until the next run, so with an idle timeout it says it is idle now rather than holding
   * readers back until then.
   */
  def runFinished(nowMs: Long): Unit =
    if (!inFlight && idleTimeoutMs.isDefined && !saidIdle) sayIdle(nowMs, wire.partitions())

  /**
   * When [[tick]] has something to check next (epoch ms); None while a batch runs or without a
   * timeout.
   */
  def nextCheckMs: Option[Long] =
    if (inFlight) None
    else idleTimeoutMs.map(t => if (saidIdle) lastCheckMs + t else lastDataMs + t)

  def endOfStream(watermark: Option[Long]): Unit = {
    val n = math.max(wire.partitions(), written)
    sendWatermark(watermark, n)
    wire.send(messages.endOfStream(n), 0 until n, "end-of-stream")
  }

  private def idleDue(nowMs: Long): Boolean =
    !saidIdle && idleTimeoutMs.exists(t => nowMs - lastDataMs >= t)

  private def sayIdle(nowMs: Long, n: Int): Unit = {
    wire.send(messages.idle(lastWatermark), 0 until n, "idle")
    idle = true
    saidIdle = true
    covered = n
    lastCheckMs = nowMs
  }

  private def sendWatermark(watermark: Option[Long], n: => Int): Unit = watermark match {
    case Some(w) if lastWatermark.forall(w > _) =>
      val count = n
      wire.send(messages.watermark(w), 0 until count, s"watermark $w")
      lastWatermark = Some(w)
      if (!saidIdle) covered = count
    case _ =>
      /* The stream grew: new partitions get the current watermark, so readers of them are not left
       * undefined. */
      if (!saidIdle) lastWatermark.foreach { w =>
        val count = n
        if (count > covered) {
          wire.send(messages.watermark(w), covered until count, s"watermark $w")
          covered = count
        }
      }
  }

  override def toString: String =
    s"ProducerControl(${messages.producer} of ${messages.producerCount})"
}

object ProducerControl {

  /** Where a [[ProducerControl]]'s messages go: one intermediate stream. */
  trait Wire {

    /** The stream's partition count now. */
    def partitions(): Int

    /** Sends `value` to each of `partitions`, in order, and returns once all were acknowledged. */
    def send(value: Array[Byte], partitions: Range, what: String): Unit
  }
}
