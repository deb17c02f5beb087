package streamctl.system

import streamctl.StreamctlException

/**
 * What the planner needs to know about a system, answered by its admin side.
 * Offsets follow Kafka's meaning: `oldest` is the first offset still on the broker,
 * `upcoming` is the offset the next written message will get (the end of the partition).
 *
 * Pure logic (startpoint resolution, groupers) depends on this trait, never on Kafka.
 */
trait SystemAdmin {
  def system: String

  /** Partition count per stream; a stream that does not exist is an error naming it. */
  def partitionCounts(streams: Set[String]): Map[String, Int]

  /**
   * Partition count and identity per stream, in one request. A system without stream
   * identities (or an old broker) answers no id; the default asks only for the counts.
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
    streams.find(!described.contains(_)).foreach(s => throw StreamctlException(s"Stream '$s' does not exist on Kafka ($why)"))
    described
  }

  /** The partition count of `stream`, which must exist (see [[describeExisting]]). */
  final def partitionCountOf(stream: String, why: String): Int = describeExisting(Seq(stream), why)(stream).partitions

  /** Every stream of the system a user can read (Kafka: the topics, internal ones left out), for `subscribePattern`. */
  def listStreams(): Set[String] =
    throw new UnsupportedOperationException(s"system '$system' cannot list its streams")

  def oldestOffsets(ssps: Set[SSP]): Map[SSP, Long]

  def upcomingOffsets(ssps: Set[SSP]): Map[SSP, Long]

  /** First offset whose timestamp is >= the given epoch ms; the upcoming offset when there is none. */
  def offsetsForTimestamps(timestamps: Map[SSP, Long]): Map[SSP, Long]

  /**
   * First offset whose timestamp is >= the given epoch ms; None where no record has one
   * (Spark's `startingOffsetsByTimestampStrategy` decides what that means). The default cannot
   * tell "none" from a match at the end, so it never answers None.
   */
  def offsetsAtOrAfter(timestamps: Map[SSP, Long]): Map[SSP, Option[Long]] =
    offsetsForTimestamps(timestamps).map { case (s, o) => s -> Some(o) }
}

/**
 * What the admin side says about one stream. `id` tells two incarnations of the same name
 * apart (Kafka's topic ID): a topic deleted and created again gets a new one, and offsets
 * recorded against the old one mean nothing in the new one.
 */
final case class StreamDescription(partitions: Int, id: Option[String])
