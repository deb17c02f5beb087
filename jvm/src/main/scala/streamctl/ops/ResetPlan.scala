package streamctl
package ops

import java.time.{Duration, Instant, LocalDateTime, OffsetDateTime}
import java.time.format.DateTimeParseException

import com.fasterxml.jackson.databind.node.ObjectNode

import streamctl.{Json, StreamctlException}
import streamctl.config.Parsers
import streamctl.startpoint.{Startpoint, StartpointCommands, StartpointResolver}
import streamctl.system.{SSP, SystemAdmin, TaskName}

/**
 * `streamctl startpoints reset`, modelled on `kafka-consumer-groups --reset-offsets`: which
 * partitions ([[Target]]: a topic, some of its partitions, or every topic the query reads), where
 * to ([[To]]), and the plan that shows, per partition, the current offset and where the query would
 * start. The current offset is where the query goes on reading without a startpoint: the end of the
 * batch it resumes after ([[QueryCheckpoint.resumesAfter]]), the last committed one or a pending
 * one that a restart replays before the startpoints take effect. Nothing is written unless
 * `execute`; then every startpoint is written through [[StartpointCommands]] (the one writer, with
 * its checks), and the query applies them when it next starts.
 *
 * Relative moves (`--shift-by`, `--to-current`, from the current offset) and `--from-file` rows
 * become `specific` startpoints at the computed offset, clamped to what the broker still has (as
 * kafka-consumer-groups does) when the broker is known.
 *
 * {{{
 * val plan = ResetPlan.plan(Seq(Target("orders", None)), To.ShiftBy(-100), task = None, current, Some(admin))
 * ResetPlan.json(plan, task = None, executed = false, "/chk/q1/streamctl", Some(checkpoint))
 * ResetPlan.execute(plan, commands)
 * }}}
 */
object ResetPlan {

  /** A topic and its partitions (None: every partition). */
  final case class Target(topic: String, partitions: Option[Seq[Int]])

  /** Where to move. */
  sealed trait To
  object To {
    case object Earliest extends To
    case object Latest extends To
    final case class Offset(offset: Long) extends To
    final case class Datetime(epochMs: Long) extends To

    /** Back by this much from now: `PT1H` (ISO-8601, as kafka-consumer-groups) or `1h`. */
    final case class ByDuration(text: String) extends To
    final case class ShiftBy(n: Long) extends To
    case object Current extends To

    /** Exact offsets per partition (from a CSV file). */
    final case class Offsets(offsets: Map[SSP, Long]) extends To
  }

  /** One partition of the plan: its current offset, the startpoint and where it resolves. */
  final case class Step(
      ssp: SSP,
      current: Option[Long],
      startpoint: Startpoint,
      target: Option[Long],
      note: String
  )

  def durationMs(text: String): Long =
    if (text.trim.toUpperCase(java.util.Locale.ROOT).startsWith("P") || text.trim.startsWith("-P"))
      try Duration.parse(text.trim).toMillis
      catch {
        case _: DateTimeParseException => throw StreamctlException(
            s"--by-duration '$text' is not an ISO-8601 duration such as PT1H30M or P1D"
          )
      }
    else Parsers.durationMs("--by-duration", text)

  /**
   * The plan for `targets`. `current`: the current offset of each SSP the query reads (the least
   * over its tasks, or `task`'s own); `admin`: the broker, to list partitions and resolve.
   */
  def plan(
      targets: Seq[Target],
      to: To,
      task: Option[TaskName],
      current: Map[SSP, Long],
      admin: Option[SystemAdmin],
      nowMs: Long = System.currentTimeMillis()
  ): Seq[Step] = {
    val ssps = partitionsOf(targets, to, current, admin)
    // An exact offset (relative moves, files) stays a number until checked against the broker.
    val wanted: Seq[(SSP, Either[Long, Startpoint])] = ssps.map { ssp =>
      def from(rel: String): Long = current.getOrElse(
        ssp,
        throw StreamctlException(
          s"$rel needs the committed offset of $ssp (where the query goes on reading it), but the query's checkpoint has none for it (has the query run a batch reading it?)"
        )
      )
      ssp -> (to match {
        case To.Earliest => Right(Startpoint.oldest())
        case To.Latest => Right(Startpoint.upcoming())
        case To.Offset(o) => Left(o)
        case To.Datetime(ms) => Right(Startpoint.timestamp(ms))
        case To.ByDuration(d) => Right(Startpoint.timestamp(nowMs - durationMs(d)))
        case To.ShiftBy(n) => Left(from("--shift-by") + n)
        case To.Current => Left(from("--to-current"))
        case To.Offsets(m) => Left(m(ssp))
      })
    }
    val clamp = to match {
      case To.ShiftBy(_) | To.Current => true
      case _ => false
    }
    val bounds = admin.filter(_ => clamp).map { a =>
      val set = wanted.map(_._1).toSet
      (a.oldestOffsets(set), a.upcomingOffsets(set))
    }
    val clamped: Seq[(SSP, Startpoint, String)] = wanted.map {
      case (ssp, Right(sp)) => (ssp, sp, "")
      case (ssp, Left(o)) =>
        val c = bounds.fold(o) { case (oldest, upcoming) =>
          math.max(oldest(ssp), math.min(upcoming(ssp), o))
        }
        if (c < 0) throw StreamctlException(
          if (clamp)
            s"$ssp: offset $c is negative; give --bootstrap-servers to clamp it to the oldest offset"
          else s"$ssp: offset $c is negative; give an offset of 0 or more"
        )
        (ssp, Startpoint.specific(c), if (c == o) "" else s"clamped from $o")
    }
    val resolved = admin.map(a =>
      new StartpointResolver(a).resolve(clamped.map(c => c._1 -> c._2).toMap)
    ).getOrElse(Map.empty)
    clamped.map { case (ssp, sp, note) =>
      val r = resolved.get(ssp)
      val target = r.map(_.offset).orElse(sp match {
        case s: Startpoint.Specific => Some(s.offset)
        case _ => None
      })
      val notes = Seq(
        note,
        if (r.exists(_.beyondData)) "end of the partition: no message at or after that time" else ""
      ).filter(_.nonEmpty)
      Step(ssp, current.get(ssp), sp, target, notes.mkString("; "))
    }
  }

  /**
   * Writes the plan's startpoints through the one startpoint writer, all or none: a row it refuses
   * (say a `--from-file` topic with `/`) must not leave the query reset on the rows before it.
   */
  def execute(steps: Seq[Step], task: Option[TaskName], commands: StartpointCommands): Unit =
    commands.setAll(steps.map(s => (s.ssp.stream, Some(s.ssp.partition), s.startpoint)), task)

  /**
   * The plan as the CLI prints it, with `currentBatch`: the batch of `checkpoint` the current
   * offsets are the end of and whether it committed (if not, the query replays it first); null when
   * the checkpoint has no batch or none was given.
   */
  def json(
      steps: Seq[Step],
      task: Option[TaskName],
      executed: Boolean,
      location: String,
      checkpoint: Option[QueryCheckpoint]
  ): ObjectNode = {
    val root = Json.obj()
    root.put("location", location)
    root.put("executed", executed)
    // A mistyped --checkpoint still takes startpoints (they wait for a query to first start with
    // it), so the answer says whether a query has run there.
    root.put("queryRan", checkpoint.isDefined)
    checkpoint.flatMap(_.resumesAfter).fold(root.putNull("currentBatch")) { b =>
      root.putObject("currentBatch").put("batchId", b.batchId).put(
        "committed",
        checkpoint.flatMap(_.committed).exists(_.batchId == b.batchId)
      )
    }
    val arr = root.putArray("plan")
    steps.foreach { s =>
      val n = arr.addObject()
      n.put("topic", s.ssp.stream).put("partition", s.ssp.partition)
      task.fold(n.putNull("task"))(t => n.put("task", t.name))
      s.current.fold(n.putNull("current"))(n.put("current", _))
      n.put("startpoint", s.startpoint.describe)
      s.target.fold(n.putNull("target"))(n.put("target", _))
      n.put("note", s.note)
    }
    root
  }

  private def partitionsOf(
      targets: Seq[Target],
      to: To,
      current: Map[SSP, Long],
      admin: Option[SystemAdmin]
  ): Seq[SSP] = to match {
    case To.Offsets(m) =>
      m.keys.groupMap(_.stream)(_.partition).toSeq.sortBy(_._1).foreach { case (topic, ps) =>
        SystemAdmin.checkPartitions(admin, topic, ps.toSeq.sorted, "startpoints reset --from-file")
      }
      m.keys.toSeq.sorted
    case _ => requested(targets, current, admin)
  }

  private def requested(
      targets: Seq[Target],
      current: Map[SSP, Long],
      admin: Option[SystemAdmin]
  ): Seq[SSP] = {
    if (targets.isEmpty)
      throw StreamctlException("No topic to reset: give --topic, --all-topics or --from-file")
    targets.flatMap { t =>
      val partitions = t.partitions match {
        case Some(ps) => SystemAdmin.checkPartitions(admin, t.topic, ps, "startpoints reset")
        case None =>
          val all =
            admin.fold(current.keys.filter(_.stream == t.topic).map(_.partition).toSeq.sorted)(
              _.partitionsOf(t.topic, None, "startpoints reset")
            )
          if (all.isEmpty) throw StreamctlException(
            s"Which partitions of topic '${t.topic}'? The query's checkpoint has none of it: give its partitions (--topic ${t.topic}:0,1) or --bootstrap-servers"
          )
          all
      }
      partitions.map(SSP.kafka(t.topic, _))
    }.distinct.sorted
  }

  /**
   * `2024-05-01T10:00:00Z` or with an offset (`+02:00`); one without a zone is refused as
   * ambiguous.
   */
  def instantMs(text: String): Long = {
    def attempt[T](f: => T): Option[T] =
      try Some(f)
      catch { case _: DateTimeParseException => None }
    attempt(
      OffsetDateTime.parse(text.trim).toInstant.toEpochMilli
    ).orElse(attempt(Instant.parse(text.trim).toEpochMilli)).getOrElse {
      if (attempt(LocalDateTime.parse(text.trim)).isDefined) throw StreamctlException(
        s"--to-datetime '$text' has no timezone, so the instant is ambiguous; add one, e.g. Z or +02:00"
      )
      throw StreamctlException(
        s"--to-datetime '$text' is not an ISO-8601 date-time such as 2024-05-01T10:00:00Z"
      )
    }
  }
}
