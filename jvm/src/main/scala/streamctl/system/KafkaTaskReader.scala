package streamctl
package system

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.kafka.clients.consumer.{Consumer, ConsumerRecord, OffsetOutOfRangeException}
import org.apache.kafka.common.TopicPartition
import org.apache.kafka.common.errors.TimeoutException
import org.slf4j.LoggerFactory

import streamctl.StreamctlException
import streamctl.system.KafkaTaskReader.{EndCheckNs, PeekIntervalNs}

/**
 * Reads exactly the records of a task's SSP ranges, in the order its chooser picks.
 *
 * Memory stays bounded whatever the backlog: each SSP holds at most one poll's worth of records,
 * and an SSP whose buffer is not empty is paused so polls only fetch for the SSPs that need data.
 * Before asking the chooser, every unfinished SSP has offered one envelope, so the order depends on
 * the chooser alone, not on fetch timing: a replayed batch is read in the same order.
 *
 * The chooser, an [[EnvelopeOrder]], comes registered with the ranges' SSPs and started
 * (`chooser.ChooserFactory.forReader`). Each record goes through its SSP's decoder
 * ([[EnvelopeDecoder]]: the control decoding of intermediate streams) before the chooser sees it;
 * each SSP has one [[Envelope]], refilled in place. The reader also tells the chooser how far an
 * SSP got without an envelope (a range that ends, a record the decoder consumed), which is what
 * lets a bootstrap SSP count as caught up. A chooser that returns nothing while envelopes are
 * outstanding fails the read: committing the batch would skip them.
 *
 * Offsets inside a range may be missing (compaction, transaction markers); the range ends when the
 * consumer's position reaches `until`. Records that are gone from the broker fail the read naming
 * the SSP and offsets, unless `failOnDataLoss` is false: then the reader moves on to the oldest
 * record still there, logs the skipped range at WARN and hands it to `onSkipped` (the planner skips
 * gaps it knows of before a batch starts; this is for records deleted between planning and
 * reading). A partition that now ends before the offset read (truncated, or created again smaller)
 * fails the read likewise, or with `failOnDataLoss` false is read on from the broker's end,
 * skipping nothing: at once in an open-ended (real-time) range, from the next batch on in a planned
 * one.
 *
 * A broker that returns nothing for `readWait.ms` fails the read with an error naming the servers
 * and the option that sets the wait.
 *
 * {{{
 * val wait = BrokerWait("127.0.0.1:9092", 60000, "kafka.default.api.timeout.ms")
 * val reader = new KafkaTaskReader(ranges, consumer, ChooserFactory.forReader(config, starts, heads), wait)
 * var e = reader.next(); while (e != null) { emit(e); e = reader.next() }
 * }}}
 */
final class KafkaTaskReader(
    ranges: Seq[SspRange],
    consumer: Consumer[Array[Byte], Array[Byte]],
    chooser: EnvelopeOrder,
    readWait: BrokerWait,
    failOnDataLoss: Boolean = true,
    decoders: SSP => EnvelopeDecoder = _ => EnvelopeDecoder.Identity,
    onSkipped: SkippedRange => Unit = _ => (),
    prefetched: java.util.Map[TopicPartition, Prefetched] = java.util.Map.of(),
    streamIds: Map[String, String] = Map.empty
) {

  private val active = ranges.filter(_.size > 0).toArray
  private val n = active.length
  private val tps = active.map(r => new TopicPartition(r.ssp.stream, r.ssp.partition))
  private val index: java.util.Map[TopicPartition, Integer] = {
    val m = new java.util.HashMap[TopicPartition, Integer]()
    tps.indices.foreach(i => m.put(tps(i), i))
    m
  }
  private val until = active.map(_.until)
  private val decoder = active.map(r => decoders(r.ssp))
  // One envelope per SSP, refilled with its next record once the chooser chose the previous one.
  private val envelope = active.map(r => new Envelope(r.ssp))
  private val byEnvelopeSsp: java.util.Map[SSP, Integer] = {
    val m = new java.util.HashMap[SSP, Integer]()
    active.indices.foreach(i => m.put(active(i).ssp, i))
    m
  }
  private val buffer = new Array[java.util.List[ConsumerRecord[Array[Byte], Array[Byte]]]](n)
  private val bufferPos = new Array[Int](n)
  private val pending = new Array[Boolean](n)
  private val done = new Array[Boolean](n)
  private val paused = new Array[Boolean](n)
  // Per SSP, the offset of the first record not handed on yet (chosen, or consumed by its
  // decoder): where reading resumes if it stops now (real-time mode's batch end).
  private val resumeAt = active.map(_.from)
  // Per SSP, the newest record timestamp read (-1: none), for seconds behind.
  private val newestMs = Array.fill(n)(-1L)
  private var lastPollNs = 0L
  private var lastEndCheckNs = 0L
  // Records the decoders consumed (control messages): real-time callers act on those at once.
  private var decoded = 0L
  // Envelopes handed on, and records found gone (failOnDataLoss=false): Spark's per-batch metrics.
  private var handedOn = 0L
  private var skippedRecords = 0L

  locally {
    consumer.assign(tps.toSeq.asJava)
    // A pooled consumer keeps the pause state of its last read for partitions still assigned;
    // `paused` starts all false, so make the consumer agree or such a partition is never fetched.
    consumer.resume(consumer.paused())
    // Where the partition's last reader left off at this range's start (the same task's previous
    // batch), its records serve as they are, and so does its consumer's position if this is that
    // consumer: a seek would throw away the fetch it already sent on from there.
    active.indices.foreach { i =>
      Option(prefetched.get(tps(i))).filter(_.streamId == streamIds.get(tps(i).topic()))
        .flatMap(left => left.indexOf(active(i).from).map(left -> _)) match {
        case Some((left, k)) =>
          if (!left.positioned) consumer.seek(tps(i), left.next)
          if (k < left.records.size()) { buffer(i) = left.records; bufferPos(i) = k }
        case None => consumer.seek(tps(i), active(i).from)
      }
    }
  }

  /**
   * Per partition read, what the consumer fetched and was not handed on, for the next reader of
   * this consumer ([[ConsumerPool.release]]). A partition whose position the consumer lost (a
   * data-loss error left it unpositioned) is left out: its next reader seeks.
   */
  def unread: java.util.Map[TopicPartition, Prefetched] = {
    val out = new java.util.HashMap[TopicPartition, Prefetched]()
    var i = 0
    while (i < n) {
      try {
        val next = consumer.position(tps(i), java.time.Duration.ZERO)
        out.put(
          tps(i),
          Prefetched(
            if (buffer(i) == null) java.util.List.of() else buffer(i),
            next,
            streamIds.get(tps(i).topic())
          )
        )
      } catch { case _: Exception => () }
      i += 1
    }
    out
  }

  /**
   * The partition count of each topic read, from the consumer's metadata, once the reader polled
   * (before that the consumer may not have fetched it): what the consumer pool weighs consumers by.
   * Never waits on the broker: a topic the metadata lacks (deleted meanwhile) is left out.
   */
  def topicPartitionCounts: Map[String, Int] =
    if (lastPollNs == 0L) Map.empty
    else tps.iterator.map(_.topic()).toSet.iterator.flatMap((t: String) =>
      scala.util.Try(consumer.partitionsFor(t, java.time.Duration.ZERO).size()).toOption
        .filter(_ > 0).map(t -> _)
    ).toMap

  // Per chosen envelope: envelopes carry the very SSP instance of their range, so an identity
  // scan finds the slot without hashing a case class; the map is the fallback.
  private def slotOf(ssp: SSP): Int = {
    if (n == 1) return 0
    var i = 0
    while (i < n && i < 8) { if (active(i).ssp eq ssp) return i; i += 1 }
    val slot = byEnvelopeSsp.get(ssp)
    if (slot == null) -1 else slot.intValue()
  }

  /**
   * The slot of the envelope the chooser chose, which must be one it was given and has not
   * returned: a user chooser that peeks instead of taking would hand the same envelope (refilled
   * with the SSP's next record) on and on, repeating records and never reading its other SSPs.
   */
  private def chosen(e: Envelope): Int = {
    val i = slotOf(e.ssp)
    if (i < 0 || !pending(i) || (envelope(i) ne e)) throw StreamctlException(
      s"The message chooser of this task (${chooser.describe}) returned the envelope of stream '${e.ssp.stream}' " +
        s"partition ${e.ssp.partition} offset ${e.offset}, which it was not holding: it had returned it already, or was " +
        "never given it. choose() must return each envelope given to update() once, and then forget it (take it, do " +
        "not peek)"
    )
    pending(i) = false
    i
  }

  /**
   * The next envelope in chooser order, or null when every range is read; valid until the next
   * call.
   */
  def next(): Envelope = {
    var waitingSince = -1L
    while (true) {
      val needData = offerAll()
      if (needData == 0) {
        val e = chooser.choose()
        if (e != null) {
          chosen(e)
          handedOn += 1
          return e
        }
        if (!anyPending) return null
        throw StreamctlException(stuck())
      }
      if (waitingSince < 0) waitingSince = System.nanoTime()
      poll(100)
      val waitedNs = System.nanoTime() - waitingSince
      if (waitedNs >= EndCheckNs && System.nanoTime() - lastEndCheckNs >= EndCheckNs)
        checkEnds(readWait.ms - waitedNs / 1000000L)
      if (waitedNs / 1000000L > readWait.ms) {
        val waiting = active.indices.filter(i => !done(i) && !pending(i)).map { i =>
          val at = scala.util.Try(consumer.position(tps(i), java.time.Duration.ZERO).longValue)
            .getOrElse(resumeAt(i))
          s"stream '${active(i).ssp.stream}' partition ${active(i).ssp.partition} at offset $at " +
            s"(reading up to ${until(i)})"
        }
        throw readWait.exceeded(s"reading ${waiting.mkString(", ")}")
      }
    }
    null
  }

  /**
   * Real-time mode, where ranges are open-ended ([[SspRange.OpenEnded]]): the next envelope in
   * chooser order among the records that have arrived, waiting up to `timeoutMs` for one; null when
   * none came in time. Unlike [[next]], the chooser does not wait for every SSP to offer an
   * envelope (an SSP may get no record for hours); an SSP that has none buffered is fetched for
   * without blocking first, so a record already at the broker is not overtaken by one that is
   * merely buffered. Returns null early, too, once a decoder consumed a record and no envelope is
   * ready: the caller may have something to do about a control message. Once every range is read (a
   * planned one ended) it returns null after the timeout, as [[next]] returns null.
   */
  def nextWithin(timeoutMs: Long): Envelope = {
    val deadline = System.nanoTime() + timeoutMs * 1000000L
    val decodedBefore = decoded
    while (true) {
      // Peeking matters only when another SSP's envelope could be chosen ahead of what is at
      // the broker; with nothing offered, the blocking poll below fetches anyway.
      if (offerAll() > 0 && anyPending && System.nanoTime() - lastPollNs > PeekIntervalNs) {
        poll(0)
        offerAll()
      }
      val e = chooser.choose()
      if (e != null) {
        val i = chosen(e)
        resumeAt(i) = e.offset + 1
        handedOn += 1
        return e
      }
      val left = (deadline - System.nanoTime()) / 1000000L
      if (!anyNeedsData) {
        if (anyPending) throw StreamctlException(stuck())
        /* Every range is read (only a planned range ends): nothing comes in this batch. Waiting out
         * the timeout, as when no record came, keeps the caller from asking again at once. */
        if (left > 0) Thread.sleep(left)
        return null
      }
      if (decoded != decodedBefore) return null
      if (left <= 0) return null
      poll(math.min(left, 100L))
    }
    null
  }

  /**
   * Per SSP read, the offset of its first record not handed on yet: where a reader stopping now
   * resumes.
   */
  def positions: Map[SSP, Long] = active.indices.map(i => active(i).ssp -> resumeAt(i)).toMap

  /**
   * Per SSP read, the newest record timestamp (epoch ms) among the records of its range read so
   * far, control messages included; SSPs with none left out.
   */
  def newestRecordTimes: Map[SSP, Long] =
    active.indices.collect { case i if newestMs(i) >= 0 => active(i).ssp -> newestMs(i) }.toMap

  /**
   * Stops the chooser. What a user's chooser throws there surfaces naming its class: the task fails
   * on it, far from where the chooser was configured.
   */
  def close(): Unit =
    try chooser.stop()
    catch {
      case NonFatal(e) => throw StreamctlException(
          s"The message chooser of this task (${chooser.describe}) failed to stop: $e",
          e
        )
    }

  /** Envelopes handed on so far (user records; control messages are [[controlMessagesRead]]). */
  def recordsRead: Long = handedOn

  /** Records the decoders consumed so far: the control messages of intermediate streams. */
  def controlMessagesRead: Long = decoded

  /**
   * Records of this read found gone from the broker and skipped (option `failOnDataLoss=false`).
   */
  def recordsSkipped: Long = skippedRecords

  /**
   * Records read from the broker and offered to the chooser but not chosen: held back for the next
   * batch, which reads them again. Only a real-time batch, which Spark ends at any moment, leaves
   * any: a micro-batch read hands on every envelope of its ranges (a chooser that keeps one fails
   * the read).
   */
  def withheld: Int = {
    var k = 0; var i = 0; while (i < n) { if (pending(i)) k += 1; i += 1 }; k
  }

  private def anyNeedsData: Boolean = {
    var i = 0; while (i < n) { if (!done(i) && !pending(i)) return true; i += 1 }; false
  }

  private def stuck(): String = {
    val held = active.indices.filter(pending).map(i => active(i).ssp).mkString(", ")
    if (chooser.isBootstrapping) {
      val behind = chooser.waitingFor.map(s =>
        s"$s (read up to ${until(byEnvelopeSsp.get(s))} in this batch)"
      ).mkString(", ")
      s"Bootstrap SSP(s) $behind did not reach the head they had when the query started, so the envelopes of " +
        s"$held cannot be processed in this batch; admission should not have planned them together"
    } else
      s"The chooser returned nothing although every SSP of the task offered an envelope ($held); " +
        "a chooser must not hold envelopes forever"
  }

  private def anyPending: Boolean = {
    var i = 0; while (i < n) { if (pending(i)) return true; i += 1 }; false
  }

  /**
   * Offers one envelope for every unfinished SSP that has none outstanding; returns how many SSPs
   * need a poll.
   */
  private def offerAll(): Int = {
    var need = 0
    var i = 0
    while (i < n) {
      if (!done(i) && !pending(i)) {
        if (!offerFromBuffer(i)) need += 1
      }
      i += 1
    }
    need
  }

  private def offerFromBuffer(i: Int): Boolean = {
    val buf = buffer(i)
    while (buf != null && bufferPos(i) < buf.size()) {
      val r = buf.get(bufferPos(i))
      bufferPos(i) += 1
      if (r.offset() >= until(i)) { finish(i); return true }
      if (r.timestamp() > newestMs(i)) newestMs(i) = r.timestamp()
      val e = envelope(i).fill(
        r.offset(),
        r.timestamp(),
        r.timestampType().id,
        r.key(),
        r.value(),
        r.headers().toArray
      )
      // The last record of the range: nothing more will be offered for this SSP.
      val last = r.offset() + 1 >= until(i)
      if (decoder(i).accept(e)) {
        pending(i) = true
        chooser.update(e)
        /* Reported after the update, so that a bootstrap SSP catches up only once its last envelope
         * is chosen. */
        if (last) finish(i)
        return true
      }
      resumeAt(i) = r.offset() + 1
      decoded += 1
      if (last) { finish(i); return true }
      /* Consumed without an envelope (a control message): the chooser may be waiting on this SSP's
       * progress. */
      chooser.advancedTo(active(i).ssp, r.offset() + 1)
    }
    buffer(i) = null
    if (done(i)) true else false
  }

  /** The range of SSP `i` is read; call it after offering its last envelope, if any. */
  private def finish(i: Int): Unit = if (!done(i)) {
    done(i) = true
    // The buffer stays: its records past the range are the next batch's (see [[unread]]).
    chooser.advancedTo(active(i).ssp, until(i))
  }

  private def poll(timeoutMs: Long): Unit = {
    lastPollNs = System.nanoTime()
    val toPause = new java.util.ArrayList[TopicPartition]()
    val toResume = new java.util.ArrayList[TopicPartition]()
    var i = 0
    while (i < n) {
      val wants = !done(i) && !pending(i) && (buffer(i) == null || bufferPos(i) >= buffer(i).size())
      if (wants && paused(i)) { toResume.add(tps(i)); paused(i) = false }
      else if (!wants && !paused(i)) { toPause.add(tps(i)); paused(i) = true }
      i += 1
    }
    if (!toPause.isEmpty) consumer.pause(toPause)
    if (!toResume.isEmpty) consumer.resume(toResume)
    val records =
      try consumer.poll(java.time.Duration.ofMillis(timeoutMs))
      catch {
        case e: OffsetOutOfRangeException => onDataLoss(e); return
      }
    records.partitions().forEach { tp =>
      val j = index.get(tp).intValue()
      buffer(j) = records.records(tp)
      bufferPos(j) = 0
    }
    // A range can end on a gap (compaction, transaction markers): the position tells.
    i = 0
    while (i < n) {
      if (!done(i) && !pending(i) && !paused(i) && buffer(i) == null) {
        // A truncation found while validating the position after a leader change surfaces here.
        val at =
          try consumer.position(tps(i))
          catch { case e: OffsetOutOfRangeException => onDataLoss(e); return }
        if (at >= until(i)) finish(i)
        else if (at > resumeAt(i)) {
          /* Past offsets with no record (a transaction's marker, compacted ones) and nothing
           * buffered: an open-ended real-time range has no end to finish at, yet a bootstrap
           * chooser waiting for this SSP's head, and the batch's end (which releases expansion
           * holds), must see that it moved. */
          resumeAt(i) = at
          chooser.advancedTo(active(i).ssp, at)
        }
      }
      i += 1
    }
  }

  /**
   * A planned range waits for records the broker had when the batch was planned. A fetch at a
   * partition's end returns nothing and raises nothing (only one past it does), so a partition cut
   * back into the range (an unclean leader election; deleted and created again smaller) would be
   * waited on until `readWait` ran out and then blamed on the broker. After a second without
   * records, as Spark's consumer does after an empty fetch, the ends of the partitions still waited
   * on are asked: one that ends at or before the position is out of range. A broker that does not
   * answer within what is left of the read's wait is the read's own error to report (it names what
   * was being read), not this check's.
   */
  private def checkEnds(leftMs: Long): Unit = {
    lastEndCheckNs = System.nanoTime()
    val waiting = active.indices.filter(i =>
      !done(i) && !pending(i) && !active(i).openEnded &&
        (buffer(i) == null || bufferPos(i) >= buffer(i).size())
    )
    if (waiting.nonEmpty && leftMs > 0) {
      val wait = java.time.Duration.ofMillis(leftMs)
      try {
        val at = waiting.map(i => tps(i) -> consumer.position(tps(i), wait)).toMap
        val ends = consumer.endOffsets(at.keySet.asJava, wait).asScala
        val short = at.filter { case (tp, off) =>
          Option(ends.getOrElse(tp, null)).exists(_ <= off)
        }
        if (short.nonEmpty) lostAt(short, null)
      } catch {
        case e: OffsetOutOfRangeException => onDataLoss(e)
        case _: TimeoutException => ()
      }
    }
  }

  private def onDataLoss(e: OffsetOutOfRangeException): Unit =
    lostAt(
      e.offsetOutOfRangePartitions().asScala.map { case (tp, o) => tp -> o.longValue }.toMap,
      e
    )

  /** The records of `lost` (partition -> the offset read) are not on the broker. */
  private def lostAt(lost: Map[TopicPartition, Long], e: Exception): Unit = {
    if (failOnDataLoss) {
      // The broker's offsets only word the error: the read fails whether it answers or not.
      val ends =
        try outOfRange(lost)._2
        catch { case NonFatal(_) => Map.empty[TopicPartition, Long] }
      throw StreamctlException(lostMessage(lost, ends), e)
    }
    val (oldest, ends) = outOfRange(lost)
    lost.foreach { case (tp, off) =>
      val j = index.get(tp).intValue()
      /* What was buffered is from before the gap: the next reader starts from the consumer's
       * position. */
      buffer(j) = null
      ends.get(tp) match {
        case Some(end) => truncated(j, off, end)
        case None => skipTo(j, off, oldest(tp))
      }
    }
  }

  /**
   * Why the partitions `lost` had no records at the offsets read: the broker's oldest offset of
   * each, and the end of those whose oldest is not past that offset (the position is past their
   * end: truncated). One place tells the two apart, for failing and for going on alike.
   */
  private def outOfRange(
      lost: Map[TopicPartition, Long]
  ): (Map[TopicPartition, Long], Map[TopicPartition, Long]) = {
    val oldest = brokerOffsets(lost.keySet, "the oldest records")(consumer.beginningOffsets(_, _))
    val past = lost.keySet.filter(tp => oldest(tp) <= lost(tp))
    val ends =
      if (past.isEmpty) Map.empty[TopicPartition, Long]
      else brokerOffsets(past, "the ends")(consumer.endOffsets(_, _))
    (oldest, ends)
  }

  private def brokerOffsets(tps: Set[TopicPartition], what: String)(
      ask: (
          java.util.Collection[TopicPartition],
          java.time.Duration
      ) => java.util.Map[TopicPartition, java.lang.Long]
  ): Map[TopicPartition, Long] =
    try ask(tps.asJava, java.time.Duration.ofMillis(readWait.ms)).asScala.map { case (tp, o) =>
        tp -> o.longValue
      }.toMap
    catch {
      case t: TimeoutException => throw readWait.exceeded(
          s"finding $what of ${tps.toSeq.sortBy(tp => (tp.topic(), tp.partition())).map(tp =>
              s"stream '${tp.topic()}' partition ${tp.partition()}"
            ).mkString(", ")}",
          t
        )
    }

  /** The error of a read that found records gone (`ends`: the partitions found truncated). */
  private def lostMessage(
      lost: Map[TopicPartition, Long],
      ends: Map[TopicPartition, Long]
  ): String = {
    val (past, gone) =
      lost.toSeq.sortBy { case (tp, _) => (tp.topic(), tp.partition()) }.partition(l =>
        ends.contains(l._1)
      )
    Seq(
      Option.when(gone.nonEmpty)(
        s"Records are no longer on the broker: ${gone.map { case (tp, off) =>
            s"stream '${tp.topic()}' partition ${tp.partition()} offset $off"
          }.mkString(", ")} (deleted by retention?). " +
          "Set option 'failOnDataLoss' to false to skip to the oldest available record instead"
      ),
      Option.when(past.nonEmpty)(
        s"Kafka holds fewer records than this task has read: ${past.map { case (tp, off) =>
            s"stream '${tp.topic()}' partition ${tp.partition()} ends at offset ${ends(tp)}, the task was at offset $off"
          }.mkString(", ")}; the partition was truncated (or deleted and created again with fewer records). " +
          "Set option 'failOnDataLoss' to false to continue from the broker's end"
      )
    ).flatten.mkString("; ")
  }

  /** Records `off` up to `first` of SSP `j` are gone (retention): reading goes on at `first`. */
  private def skipTo(j: Int, off: Long, first: Long): Unit = {
    /* Only this range's share counts here: the rest belongs to later batches, which skip it
     * themselves. */
    val skipped = SkippedRange(active(j).ssp, off, math.min(first, until(j)))
    // One WARN names the whole gone range: planning moves the next batch past the rest of
    // it without another (plan.DataLossChecks); only this batch's share is counted here.
    KafkaTaskReader.log.warn(skipped.copy(until = first).describe)
    skippedRecords += skipped.records
    onSkipped(skipped)
    // Nothing of this SSP is outstanding: reading resumes past the records that are gone.
    if (resumeAt(j) >= off) resumeAt(j) = skipped.until
    if (first < until(j)) consumer.seek(tps(j), first)
    else finish(j) // nothing of this range is left on the broker
  }

  /**
   * The partition of SSP `j` ends at `end`, before `off` where this read was: it was truncated (or
   * deleted and created again smaller). Nothing is skipped (records the query read are gone, and
   * their offsets will be used again), so nothing counts in [[recordsSkipped]]. Reading goes on
   * from the broker's end, as planning has a micro-batch do (`dataloss.DataLossChecks.truncation`):
   * an open-ended range (real-time) goes on there at once, since where its reader gets to is its
   * batch's end; a planned range ends, and the next batch's planning moves on to the broker's end.
   */
  private def truncated(j: Int, off: Long, end: Long): Unit = {
    val ssp = active(j).ssp
    val where =
      s"Stream '${ssp.stream}' partition ${ssp.partition} ends at offset $end on the broker, before " +
        s"offset $off this task had read up to (the partition was truncated, or deleted and created again with fewer " +
        "records)"
    if (active(j).openEnded) {
      // The log may have grown again before the broker answered: offsets from `off` on are unread.
      val resume = math.min(end, off)
      KafkaTaskReader.log.warn(
        s"$where; reading on from offset $resume, because option 'failOnDataLoss' is false. Records the query " +
          "read at the offsets from there on are gone, and the records written there now are read"
      )
      consumer.seek(tps(j), resume)
      resumeAt(j) = resume
    } else {
      KafkaTaskReader.log.warn(
        s"$where; offsets $off to ${until(j) - 1} of this batch are not read, and the next batch continues from " +
          "the broker's end, because option 'failOnDataLoss' is false"
      )
      finish(j)
    }
  }
}

object KafkaTaskReader {
  // How long a planned read waits without records before asking the partitions' ends.
  private val EndCheckNs = 1000L * 1000000L
  // Real-time mode fetches for SSPs with nothing buffered at most this often without blocking.
  private val PeekIntervalNs = 1000000L
  private val log = LoggerFactory.getLogger(classOf[KafkaTaskReader])
}
