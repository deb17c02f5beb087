package streamctl.plan

import scala.jdk.CollectionConverters._

import streamctl.{Json, StreamctlException}
import streamctl.system.{SSP, SystemAdmin}

/**
 * Where a query starts (`startingOffsets`, `startingOffsetsByTimestamp`, `startingTimestamp`)
 * or a batch read ends (`endingOffsets*`), with the meanings of Spark's Kafka source:
 * `earliest`, `latest`, per-partition JSON (`{"orders":{"0":23,"1":-2}}`, -2 earliest,
 * -1 latest), per-partition timestamps, or one timestamp for every partition. A timestamp
 * resolves to the first offset whose record timestamp is at or after it.
 *
 * {{{
 * val start = OffsetBound.starting(options, batch = false)   // from the source's options
 * start.resolve(admin, ssps, "startingOffsets")              // Map(ssp -> offset)
 * }}}
 */
sealed trait OffsetBound extends Serializable {
  /** The option it was given by, for errors. */
  def option: String

  /**
   * The offset of each of `ssps`. `noMatch` is what a timestamp without a matching record
   * gives: `None` fails naming the SSP (Spark's strategy `error`), else the partition's end.
   */
  def resolve(admin: SystemAdmin, ssps: Set[SSP], noMatchIsLatest: Boolean): Map[SSP, Long]
}

object OffsetBound {
  val Earliest = -2L
  val Latest = -1L

  final case class Named(option: String, latest: Boolean) extends OffsetBound {
    override def resolve(admin: SystemAdmin, ssps: Set[SSP], noMatchIsLatest: Boolean): Map[SSP, Long] =
      if (latest) admin.upcomingOffsets(ssps) else admin.oldestOffsets(ssps)
  }

  /** Per partition: an offset, or -2 / -1 for earliest / latest. */
  final case class Specific(option: String, offsets: Map[SSP, Long]) extends OffsetBound {
    override def resolve(admin: SystemAdmin, ssps: Set[SSP], noMatchIsLatest: Boolean): Map[SSP, Long] = {
      checkCovers(option, offsets.keySet, ssps)
      val earliest = admin.oldestOffsets(ssps.filter(s => offsets(s) == Earliest))
      val latest = admin.upcomingOffsets(ssps.filter(s => offsets(s) == Latest))
      ssps.iterator.map(s => s -> (offsets(s) match {
        case Earliest => earliest(s)
        case Latest => latest(s)
        case o => o
      })).toMap
    }
  }

  /** Per partition timestamps (`startingOffsetsByTimestamp`), or one for all (`startingTimestamp`: `all`). */
  final case class Timestamps(option: String, byPartition: Map[SSP, Long], all: Option[Long]) extends OffsetBound {
    override def resolve(admin: SystemAdmin, ssps: Set[SSP], noMatchIsLatest: Boolean): Map[SSP, Long] = {
      val wanted = all match {
        case Some(ts) => ssps.iterator.map(_ -> ts).toMap
        case None =>
          checkCovers(option, byPartition.keySet, ssps)
          byPartition.filter { case (s, _) => ssps.contains(s) }
      }
      val found = admin.offsetsAtOrAfter(wanted)
      val unmatched = found.collect { case (s, None) => s }.toSet
      if (unmatched.nonEmpty && !noMatchIsLatest) throw StreamctlException(
        s"Option '$option': no record at or after the timestamp in ${unmatched.toSeq.sorted.map(s => s"stream '${s.stream}' partition ${s.partition}").mkString(", ")} " +
          s"(set 'startingOffsetsByTimestampStrategy' to 'latest' to start such partitions at their end)")
      val ends = if (unmatched.isEmpty) Map.empty[SSP, Long] else admin.upcomingOffsets(unmatched)
      found.map { case (s, o) => s -> o.getOrElse(ends(s)) }
    }
  }

  /** Spark requires every partition read to be named in a per-partition option; so does streamctl. */
  private def checkCovers(option: String, given: Set[SSP], ssps: Set[SSP]): Unit = {
    val missing = ssps.diff(given)
    if (missing.nonEmpty) throw StreamctlException(
      s"Option '$option' names no offset for ${missing.toSeq.sorted.map(s => s"stream '${s.stream}' partition ${s.partition}").mkString(", ")}: " +
        "give every partition the query reads (-2 is earliest, -1 latest)")
  }

  /** `{"topicA":{"0":23,"1":-1}}`: a number per partition per topic. */
  def parsePartitionJson(option: String, v: String): Map[SSP, Long] = {
    val what = s"option '$option' (expected JSON such as {\"topicA\":{\"0\":23,\"1\":-2}})"
    val node = Json.parse(v, what)
    if (!node.isObject) throw StreamctlException(s"Malformed $what: '$v'")
    node.fields().asScala.flatMap { t =>
      if (!t.getValue.isObject) throw StreamctlException(s"Malformed $what: topic '${t.getKey}' needs an object of partition -> number")
      t.getValue.fields().asScala.map { p =>
        val partition = p.getKey.toIntOption.filter(_ >= 0).getOrElse(
          throw StreamctlException(s"Malformed $what: '${p.getKey}' of topic '${t.getKey}' is not a partition number"))
        if (!p.getValue.canConvertToLong) throw StreamctlException(
          s"Malformed $what: topic '${t.getKey}' partition $partition has '${p.getValue}', not a number")
        SSP.kafka(t.getKey, partition) -> p.getValue.asLong()
      }
    }.toMap
  }

  /** `earliest`, `latest` or per-partition JSON; `allowed` names which special values this option takes. */
  def parseOffsets(option: String, v: String, allowEarliest: Boolean, allowLatest: Boolean): OffsetBound = {
    def refuse(what: String) = throw StreamctlException(s"Option '$option' cannot be $what for this kind of query " +
      (if (!allowLatest) "(a batch read starts at the earliest offsets or given ones)" else "(a batch read cannot end before it starts)"))
    v.trim.toLowerCase(java.util.Locale.ROOT) match {
      case "earliest" => if (allowEarliest) Named(option, latest = false) else refuse("'earliest'")
      case "latest" => if (allowLatest) Named(option, latest = true) else refuse("'latest'")
      case _ if v.trim.startsWith("{") =>
        val offsets = parsePartitionJson(option, v)
        offsets.foreach { case (s, o) =>
          if (o < Earliest) throw StreamctlException(s"Option '$option': stream '${s.stream}' partition ${s.partition} has offset $o; " +
            "an offset is >= 0, or -2 (earliest) or -1 (latest)")
          if (o == Earliest && !allowEarliest) refuse(s"-2 (earliest) for stream '${s.stream}' partition ${s.partition}")
          if (o == Latest && !allowLatest) refuse(s"-1 (latest) for stream '${s.stream}' partition ${s.partition}")
        }
        Specific(option, offsets)
      case _ => throw StreamctlException(s"Option '$option' must be 'earliest', 'latest' or per-partition JSON such as " +
        s"""{"topicA":{"0":23,"1":-2}}, not '$v'""")
    }
  }

  def parseTimestamps(option: String, v: String): Timestamps = {
    val ts = parsePartitionJson(option, v)
    ts.foreach { case (s, t) => if (t < 0) throw StreamctlException(
      s"Option '$option': stream '${s.stream}' partition ${s.partition} has timestamp $t; a timestamp is epoch milliseconds >= 0") }
    Timestamps(option, ts, None)
  }
}
