package streamctl.startpoint

import scala.collection.mutable

import streamctl.StreamctlException
import streamctl.system.{SSP, StreamDescription, SystemAdmin}

/**
 * A system held in memory: each partition is its oldest offset plus the timestamps of the messages
 * from there on. Counts calls, so tests can check that resolution is bulk.
 */
class FakeSystemAdmin(val system: String = SSP.KafkaSystem) extends SystemAdmin {
  private val partitions = mutable.LinkedHashMap.empty[SSP, (Long, Vector[Long])]
  val calls: mutable.Map[String, Int] = mutable.Map.empty.withDefaultValue(0)

  /** The stream and head requests in the order they were made. */
  val requests: mutable.ArrayBuffer[String] = mutable.ArrayBuffer.empty

  /** Topic IDs by stream; a stream without one is described without an ID. */
  val ids: mutable.Map[String, String] = mutable.Map.empty

  /** Answers to heads asked ahead ([[upcomingOffsetsAsked]]) that someone waited for. */
  var headsAwaited = 0

  override def upcomingOffsetsAsked(ssps: Set[SSP]): () => Map[SSP, Long] = {
    // Like Kafka's: partitions it does not know are left out of an answer asked ahead.
    val answer = super.upcomingOffsetsAsked(ssps.filter(partitions.contains))
    () => { headsAwaited += 1; answer() }
  }

  /**
   * Whether offsets asked for a partition it does not have fail, as Kafka's do (a deleted topic);
   * otherwise they are left out of the answer.
   */
  var refusesUnknown = false

  private def known(ssps: Set[SSP]): Set[SSP] = {
    val unknown = ssps.filterNot(partitions.contains)
    if (refusesUnknown && unknown.nonEmpty) throw StreamctlException(
      s"no such partitions: ${unknown.mkString(", ")}",
      new org.apache.kafka.common.errors.UnknownTopicOrPartitionException(unknown.head.toString)
    )
    ssps
  }

  def add(ssp: SSP, oldest: Long, timestamps: Seq[Long]): this.type = {
    partitions(ssp) = (oldest, timestamps.toVector); this
  }

  /** Deletes the stream's partitions and creates `partitions` empty ones under a new ID. */
  def recreate(stream: String, partitions: Int, id: String): this.type = {
    this.partitions.keys.filter(_.stream == stream).toList.foreach(this.partitions.remove)
    (0 until partitions).foreach(p => add(SSP(system, stream, p), 0, Nil))
    ids(stream) = id
    this
  }

  /** Deletes the stream: it is no longer listed or described. */
  def delete(stream: String): this.type = {
    partitions.keys.filter(_.stream == stream).toList.foreach(partitions.remove)
    ids.remove(stream)
    this
  }

  override def describeStreams(streams: Set[String]): Map[String, StreamDescription] =
    partitionCounts(streams).map { case (s, n) => s -> StreamDescription(n, ids.get(s)) }

  override def partitionCounts(streams: Set[String]): Map[String, Int] = {
    calls("partitionCounts") += 1
    requests += "partitionCounts"
    streams.map { s =>
      val ps = partitions.keys.filter(_.stream == s)
      // As Kafka's admin fails on a topic it does not have (SystemAdmin.streamGone tells).
      if (ps.isEmpty) throw StreamctlException(
        s"Stream '$s' does not exist",
        new org.apache.kafka.common.errors.UnknownTopicOrPartitionException(s)
      )
      s -> (ps.map(_.partition).max + 1)
    }.toMap
  }

  override def oldestOffsets(ssps: Set[SSP]): Map[SSP, Long] = {
    calls("oldestOffsets") += 1
    known(ssps).iterator.flatMap(s => partitions.get(s).map(p => s -> p._1)).toMap
  }

  override def upcomingOffsets(ssps: Set[SSP]): Map[SSP, Long] = {
    calls("upcomingOffsets") += 1
    requests += "upcomingOffsets"
    known(ssps).iterator.flatMap(s => partitions.get(s).map(p => s -> (p._1 + p._2.size))).toMap
  }

  override def offsetsForTimestamps(timestamps: Map[SSP, Long]): Map[SSP, Long] = {
    calls("offsetsForTimestamps") += 1
    timestamps.flatMap { case (s, t) =>
      partitions.get(s).map { case (oldest, ts) =>
        val i = ts.indexWhere(_ >= t)
        s -> (oldest + (if (i < 0) ts.size else i))
      }
    }
  }

  override def offsetsAtOrAfter(timestamps: Map[SSP, Long]): Map[SSP, Option[Long]] =
    timestamps.flatMap { case (s, t) =>
      partitions.get(s).map { case (oldest, ts) =>
        val i = ts.indexWhere(_ >= t)
        s -> (if (i < 0) None else Some(oldest + i))
      }
    }

  /** The SSPs each newest-times request asked for, in order. */
  val newestAsked = scala.collection.mutable.Buffer[Set[SSP]]()

  override def newestTimestampsAsked(ssps: Set[SSP]): () => Map[SSP, Long] = {
    newestAsked += ssps
    val answer = ssps.iterator.flatMap(s =>
      partitions.get(s).filter(_._2.nonEmpty).map(p => s -> p._2.max)
    ).toMap
    () => answer
  }

  /** Runs after each listing is answered: what changes between it and the next request. */
  var afterListing: () => Unit = () => ()

  override def listStreams(): Set[String] = {
    val listed = partitions.keys.map(_.stream).toSet
    afterListing()
    listed
  }
}
