package streamctl.system

import streamctl.StreamctlException

/**
 * What the planner needs to know about a system, answered by its admin side. Offsets follow Kafka's
 * meaning: `oldest` is the first offset still on the broker, `upcoming` is the offset the next
 * written message will get (the end of the partition).
 *
 * Pure logic (startpoint resolution, groupers) depends on this trait, never on Kafka.
 */
trait SystemAdmin {
  def system: String

  /** Partition count per stream; a stream that does not exist is an error naming it. */
  def partitionCounts(streams: Set[String]): Map[String, Int]

  /**
   * Partition count and identity per stream, in one request. A system without stream identities (or
   * an old broker) answers no id; the default asks only for the counts.
   */
  def describeStreams(streams: Set[String]): Map[String, StreamDescription] =
    partitionCounts(streams).map { case (s, n) => s -> StreamDescription(n, None) }

  /**
   * [[describeStreams]] of `streams`, each of which must exist: the one check, for every caller,
   * that fails naming the stream and `why` it was asked for.
   *
   * {{{
   * admin.describeExisting(Seq("orders"), "option 'subscribe'")
   * // StreamctlException: Stream 'orders' does not exist on Kafka (option 'subscribe')
   * }}}
   */
  final def describeExisting(streams: Seq[String], why: String): Map[String, StreamDescription] = {
    val described = describeStreams(streams.toSet)
    streams.find(!described.contains(_)).foreach(s =>
      throw StreamctlException(s"Stream '$s' does not exist on Kafka ($why)")
    )
    described
  }

  /** The partition count of `stream`, which must exist (see [[describeExisting]]). */
  final def partitionCountOf(stream: String, why: String): Int =
    describeExisting(Seq(stream), why)(stream).partitions

  /**
   * The partitions of `stream` that `asked` names, every one when None; the stream and each
   * partition must exist ([[SystemAdmin.checkPartitions]]), else the error names `why` they were
   * asked for.
   *
   * {{{
   * admin.partitionsOf("orders", None, "startpoints reset")           // 0 until 4
   * admin.partitionsOf("orders", Some(Seq(7)), "startpoints reset")
   * // StreamctlException: Partition 7 of stream 'orders' does not exist (startpoints reset): it has 4 partitions (0..3)
   * }}}
   */
  final def partitionsOf(stream: String, asked: Option[Seq[Int]], why: String): Seq[Int] = {
    val count = partitionCountOf(stream, why)
    asked.fold[Seq[Int]](0 until count)(SystemAdmin.checkPartitions(stream, _, Some(count), why))
  }

  /**
   * Every stream of the system a user can read (Kafka: the topics, internal ones left out), for
   * `subscribePattern`.
   */
  def listStreams(): Set[String] =
    throw new UnsupportedOperationException(s"system '$system' cannot list its streams")

  def oldestOffsets(ssps: Set[SSP]): Map[SSP, Long]

  def upcomingOffsets(ssps: Set[SSP]): Map[SSP, Long]

  /**
   * [[upcomingOffsets]] asked now and answered when the returned function is called, so the request
   * is in flight while the caller does other work (the planner describes the streams meanwhile: one
   * round trip less at each check). SSPs the system does not have are left out of the answer rather
   * than failing it (the caller asks them again where it needs them). The default asks at once.
   *
   * {{{
   * val heads = admin.upcomingOffsetsAsked(ssps)
   * val described = admin.describeStreams(streams)   // while the heads are on their way
   * heads()                                          // Map(SSP(orders, 0) -> 42, ...)
   * }}}
   */
  def upcomingOffsetsAsked(ssps: Set[SSP]): () => Map[SSP, Long] = {
    val answer = upcomingOffsets(ssps)
    () => answer
  }

  /**
   * Per SSP, the newest record timestamp (epoch ms) on the broker, asked now and answered when the
   * returned function is called (which fails as [[upcomingOffsets]] does); SSPs without records or
   * timestamps are left out. One request for all `ssps`, for [[TimeLag]]. A system that keeps no
   * record times answers nothing.
   *
   * {{{
   * val newest = admin.newestTimestampsAsked(Set(SSP.kafka("orders", 0)))
   * newest()   // Map(SSP(orders, 0) -> 1764236789000)
   * }}}
   */
  def newestTimestampsAsked(ssps: Set[SSP]): () => Map[SSP, Long] = () => Map.empty

  /**
   * First offset whose timestamp is >= the given epoch ms; the upcoming offset when there is none.
   */
  def offsetsForTimestamps(timestamps: Map[SSP, Long]): Map[SSP, Long]

  /**
   * First offset whose timestamp is >= the given epoch ms; None where no record has one (Spark's
   * `startingOffsetsByTimestampStrategy` decides what that means). The default cannot tell "none"
   * from a match at the end, so it never answers None.
   */
  def offsetsAtOrAfter(timestamps: Map[SSP, Long]): Map[SSP, Option[Long]] =
    offsetsForTimestamps(timestamps).map { case (s, o) => s -> Some(o) }
}

object SystemAdmin {

  /**
   * Whether a call failed because a stream (or partition) it named does not exist on the system:
   * deleted since it was last described, or never there.
   */
  def streamGone(e: StreamctlException): Boolean =
    e.getCause.isInstanceOf[org.apache.kafka.common.errors.UnknownTopicOrPartitionException]

  /**
   * The one rule for a partition number a user gives: at least 0 and, when the stream's partition
   * `count` is known (without a broker it is not), below it. Returns `partitions`.
   */
  def checkPartitions(
      stream: String,
      partitions: Seq[Int],
      count: Option[Int],
      why: String
  ): Seq[Int] = {
    partitions.find(p => !exists(p, count)).foreach(p =>
      throw noSuchPartition(stream, p, count, why)
    )
    partitions
  }

  /** Whether `partition` may exist in a stream of `count` partitions (any count when unknown). */
  def exists(partition: Int, count: Option[Int]): Boolean =
    count.fold(partition >= 0)(exists(partition, _))

  /** Whether `partition` exists in a stream of `count` partitions. */
  def exists(partition: Int, count: Int): Boolean = partition >= 0 && partition < count

  /**
   * [[checkPartitions]] against the stream's partition count when a broker is known (`admin`), else
   * only that none is negative.
   */
  def checkPartitions(
      admin: Option[SystemAdmin],
      stream: String,
      partitions: Seq[Int],
      why: String
  ): Seq[Int] =
    checkPartitions(stream, partitions, admin.map(_.partitionCountOf(stream, why)), why)

  /**
   * The one wording of a partition that does not exist: the stream, the partition, `why` it was
   * asked for, the valid ones.
   */
  def noSuchPartition(
      stream: String,
      partition: Int,
      count: Option[Int],
      why: String
  ): StreamctlException = {
    val valid = count match {
      case None => "partitions are numbered from 0"
      case Some(0) => "it has no partitions"
      case Some(1) => "it has 1 partition (0)"
      case Some(n) => s"it has $n partitions (0..${n - 1})"
    }
    StreamctlException(s"Partition $partition of stream '$stream' does not exist ($why): $valid")
  }
}
