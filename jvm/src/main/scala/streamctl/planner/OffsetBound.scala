package streamctl
package planner

import scala.jdk.CollectionConverters._

import streamctl.{Json, StreamctlException}
import streamctl.system.{SSP, SystemAdmin}

/**
 * Where a query starts (`startingOffsets`, `startingOffsetsByTimestamp`, `startingTimestamp`) or a
 * batch read ends (`endingOffsets*`), with the meanings of Spark's Kafka source: `earliest`,
 * `latest`, per-partition JSON (`{"orders":{"0":23,"1":-2}}`, -2 earliest, -1 latest),
 * per-partition timestamps, or one timestamp for every partition. A timestamp resolves to the first
 * offset whose record timestamp is at or after it.
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
   * The offset of each of `ssps`. `noMatch` is what a timestamp without a matching record gives:
   * `None` fails naming the SSP (Spark's strategy `error`), else the partition's end.
   */
  def resolve(admin: SystemAdmin, ssps: Set[SSP], noMatchIsLatest: Boolean): Map[SSP, Long]
}

object OffsetBound {
  val Earliest = -2L
  val Latest = -1L

  final case class Named(option: String, latest: Boolean) extends OffsetBound {
    override def resolve(
        admin: SystemAdmin,
        ssps: Set[SSP],
        noMatchIsLatest: Boolean
    ): Map[SSP, Long] =
      if (latest) admin.upcomingOffsets(ssps) else admin.oldestOffsets(ssps)
  }

  /** Per partition: an offset, or -2 / -1 for earliest / latest. */
  final case class Specific(option: String, offsets: Map[SSP, Long]) extends OffsetBound {
    override def resolve(
        admin: SystemAdmin,
        ssps: Set[SSP],
        noMatchIsLatest: Boolean
    ): Map[SSP, Long] = {
      checkNamesExactly(option, offsets.keySet, ssps, admin)
      val earliest = admin.oldestOffsets(ssps.filter(s => offsets(s) == Earliest))
      // An offset past a partition's end is the option's mistake (a JSON written for another
      // topic, a typo); found later it would look like a truncated topic.
      val given = ssps.filter(s => offsets(s) >= 0)
      val latest = admin.upcomingOffsets(ssps.filter(s => offsets(s) == Latest) ++ given)
      given.toSeq.sorted.find(s => latest.get(s).exists(offsets(s) > _)).foreach { s =>
        throw StreamctlException(
          s"Option '$option' gives offset ${offsets(s)} for stream '${s.stream}' partition ${s.partition}, past its end " +
            s"(${latest(s)}, the next offset to be written): give an offset up to the end, or -1 for latest"
        )
      }
      ssps.iterator.map(s =>
        s -> (offsets(s) match {
          case Earliest => earliest(s)
          case Latest => latest(s)
          case o => o
        })
      ).toMap
    }
  }

  /**
   * Per partition timestamps (`startingOffsetsByTimestamp`), or one for all (`startingTimestamp`:
   * `all`).
   */
  final case class Timestamps(option: String, byPartition: Map[SSP, Long], all: Option[Long])
      extends OffsetBound {
    override def resolve(
        admin: SystemAdmin,
        ssps: Set[SSP],
        noMatchIsLatest: Boolean
    ): Map[SSP, Long] = {
      val wanted = all match {
        case Some(ts) => ssps.iterator.map(_ -> ts).toMap
        case None =>
          checkNamesExactly(option, byPartition.keySet, ssps, admin)
          byPartition
      }
      val found = admin.offsetsAtOrAfter(wanted)
      val unmatched = found.collect { case (s, None) => s }.toSet
      if (unmatched.nonEmpty && !noMatchIsLatest) throw StreamctlException(
        s"Option '$option': no record at or after the timestamp in ${unmatched.toSeq.sorted.map(s =>
            s"stream '${s.stream}' partition ${s.partition}"
          ).mkString(", ")} " +
          s"(set 'startingOffsetsByTimestampStrategy' to 'latest' to start such partitions at their end)"
      )
      val ends = if (unmatched.isEmpty) Map.empty[SSP, Long] else admin.upcomingOffsets(unmatched)
      found.map { case (s, o) => s -> o.getOrElse(ends(s)) }
    }
  }

  /**
   * A per-partition option names exactly the partitions the query reads (`read`), as in Spark,
   * which refuses a JSON whose partitions differ from those it reads: one left out would have no
   * offset, and one named beyond them means the JSON was written for other partitions (a typo,
   * another query, a topic since recreated), so ignoring it would start the query elsewhere than
   * the user believes. A named partition of a stream the query reads that does not exist is refused
   * by the one partition rule ([[SystemAdmin.partitionsOf]]), naming the valid ones; the broker is
   * asked only then.
   *
   * {{{
   * val read = (0 until 4).map(SSP.kafka("orders", _)).toSet
   * checkNamesExactly("startingOffsets", read + SSP.kafka("orders", 7), read, admin)
   * // StreamctlException: Partition 7 of stream 'orders' does not exist (option 'startingOffsets'): it has 4 partitions (0..3)
   * checkNamesExactly("startingOffsets", read + SSP.kafka("rates", 0), read, admin)
   * // StreamctlException: Option 'startingOffsets' names stream 'rates' partition 0, which the query does not read
   * //   (it reads stream 'orders' partitions 0..3): give exactly the partitions the query reads
   * }}}
   */
  private[planner] def checkNamesExactly(
      option: String,
      named: Set[SSP],
      read: Set[SSP],
      admin: SystemAdmin
  ): Unit = {
    val readByStream = read.groupMap(_.stream)(_.partition).map { case (s, ps) =>
      s -> ps.toSeq.sorted
    }
    named.diff(read).groupMap(_.stream)(_.partition).toSeq.sortBy(_._1).foreach {
      case (stream, extra) =>
        val reads = readByStream.get(stream) match {
          case Some(ps) =>
            admin.partitionsOf(stream, Some(extra.toSeq.sorted), s"option '$option'")
            Seq(stream -> ps)
          case None => readByStream.toSeq.sortBy(_._1)
        }
        throw StreamctlException(s"Option '$option' names stream '$stream' partition ${extra.min}, which the query does not " +
          s"read (it reads ${reads.map { case (s, ps) =>
              s"stream '$s' ${partitionList(ps)}"
            }.mkString(", ")}): " +
          "give exactly the partitions the query reads")
    }
    val missing = read.diff(named)
    if (missing.nonEmpty) throw StreamctlException(
      s"Option '$option' names no offset for ${missing.toSeq.sorted.map(s =>
          s"stream '${s.stream}' partition ${s.partition}"
        ).mkString(", ")}: " +
        "give every partition the query reads (-2 is earliest, -1 latest)"
    )
  }

  /**
   * What a query reads of a stream, in an error: `partitions 0..3` for a run without gaps, else
   * each.
   */
  private def partitionList(ps: Seq[Int]): String =
    if (ps.size == 1) s"partition ${ps.head}"
    else if (ps.size > 2 && ps.last - ps.head == ps.size - 1) s"partitions ${ps.head}..${ps.last}"
    else s"partitions ${ps.mkString(", ")}"

  /** `{"topicA":{"0":23,"1":-1}}`: a number per partition per topic. */
  def parsePartitionJson(option: String, v: String): Map[SSP, Long] = {
    val what = s"""option '$option' (expected JSON such as {"topicA":{"0":23,"1":-2}})"""
    val node = Json.parse(v, what)
    if (!node.isObject) throw StreamctlException(s"Malformed $what: '$v'")
    node.properties().asScala.flatMap { t =>
      if (!t.getValue.isObject) throw StreamctlException(
        s"Malformed $what: topic '${t.getKey}' needs an object of partition -> number"
      )
      t.getValue.properties().asScala.map { p =>
        val partition = p.getKey.toIntOption.filter(_ >= 0).getOrElse(
          throw StreamctlException(
            s"Malformed $what: '${p.getKey}' of topic '${t.getKey}' is not a partition number"
          )
        )
        if (!p.getValue.canConvertToLong) throw StreamctlException(
          s"Malformed $what: topic '${t.getKey}' partition $partition has '${p.getValue}', not a number"
        )
        SSP.kafka(t.getKey, partition) -> p.getValue.asLong()
      }
    }.toMap
  }

  /**
   * `earliest`, `latest` or per-partition JSON; `allowed` names which special values this option
   * takes.
   */
  def parseOffsets(
      option: String,
      v: String,
      allowEarliest: Boolean,
      allowLatest: Boolean
  ): OffsetBound = {
    def refuse(what: String) =
      throw StreamctlException(s"Option '$option' cannot be $what for this kind of query " +
        (if (!allowLatest) "(a batch read starts at the earliest offsets or given ones)"
         else "(a batch read cannot end before it starts)"))
    v.trim.toLowerCase(java.util.Locale.ROOT) match {
      case "earliest" => if (allowEarliest) Named(option, latest = false) else refuse("'earliest'")
      case "latest" => if (allowLatest) Named(option, latest = true) else refuse("'latest'")
      case _ if v.trim.startsWith("{") =>
        val offsets = parsePartitionJson(option, v)
        offsets.foreach { case (s, o) =>
          if (o < Earliest) throw StreamctlException(
            s"Option '$option': stream '${s.stream}' partition ${s.partition} has offset $o; " +
              "an offset is >= 0, or -2 (earliest) or -1 (latest)"
          )
          if (o == Earliest && !allowEarliest)
            refuse(s"-2 (earliest) for stream '${s.stream}' partition ${s.partition}")
          if (o == Latest && !allowLatest)
            refuse(s"-1 (latest) for stream '${s.stream}' partition ${s.partition}")
        }
        Specific(option, offsets)
      case _ => throw StreamctlException(
          s"Option '$option' must be 'earliest', 'latest' or per-partition JSON such as " +
            s"""{"topicA":{"0":23,"1":-2}}, not '$v'"""
        )
    }
  }

  def parseTimestamps(option: String, v: String): Timestamps = {
    val ts = parsePartitionJson(option, v)
    ts.foreach { case (s, t) =>
      if (t < 0) throw StreamctlException(
        s"Option '$option': stream '${s.stream}' partition ${s.partition} has timestamp $t; a timestamp is epoch milliseconds >= 0"
      )
    }
    Timestamps(option, ts, None)
  }
}
