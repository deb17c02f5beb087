package streamctl.startpoint

import scala.collection.mutable

import streamctl.{StreamctlException, UserClass}
import streamctl.config.{OptionSpec, Options}
import streamctl.startpoint.Startpoint._
import streamctl.system.{SSP, SystemAdmin, TaskName}

/**
 * Turns startpoints into offsets with as few admin calls as possible: one call per kind of lookup
 * for the whole set (oldest offsets, upcoming offsets, offsets for timestamps, one per custom
 * kind), never one per SSP. Only when several tasks ask for different times on the same SSP does
 * the timestamp lookup take one call per distinct time on that SSP.
 *
 * Rules:
 *   - timestamp: first offset whose timestamp is >= it; the upcoming offset when there is none,
 *     flagged [[Resolution.beyondData]];
 *   - oldest / upcoming: the partition's first / next offset;
 *   - specific (and custom results): must lie in [oldest, upcoming], else an error naming the SSP,
 *     the offset and the valid range;
 *   - custom: the [[CustomStartpointResolver]] for its kind (option `startpoint.resolvers`), else
 *     an error.
 * Every problem found is reported in one error, so a user fixes them all in one go.
 *
 * {{{
 * val resolver = new StartpointResolver(kafkaAdmin)
 * resolver.resolve(Map(SSP.kafka("orders", 3) -> Startpoint.oldest())) // Map(orders-3 -> Resolution(.., 0, false))
 * }}}
 */
class StartpointResolver(admin: SystemAdmin, customResolvers: Seq[CustomStartpointResolver]) {
  import StartpointResolver.MaxListed

  def this(admin: SystemAdmin) = this(admin, Nil)

  private val customByKind: Map[String, CustomStartpointResolver] = {
    val dup = customResolvers.groupBy(_.kind).collect { case (k, rs) if rs.size > 1 => k }
    if (dup.nonEmpty) throw StreamctlException(
      s"Several custom startpoint resolvers registered for kind(s) ${dup.mkString(", ")}"
    )
    customResolvers.map(r => r.kind -> r).toMap
  }

  /** Resolves SSP-level startpoints (e.g. for a dry run). */
  def resolve(startpoints: Map[SSP, Startpoint]): Map[SSP, Resolution] =
    resolveKeyed[SSP](startpoints, identity, _.toString)

  /**
   * Resolves the fanned-out startpoints of a query, as returned by [[StartpointManager.fanOut]].
   */
  def resolveForTasks(startpoints: Map[(SSP, TaskName), Startpoint])
      : Map[(SSP, TaskName), Resolution] =
    resolveForTasks(startpoints, { case (ssp, task) => s"$ssp (task '$task')" })

  /**
   * The same, with errors naming each startpoint by `label` (e.g. the store key the user wrote).
   */
  def resolveForTasks(
      startpoints: Map[(SSP, TaskName), Startpoint],
      label: ((SSP, TaskName)) => String
  ): Map[(SSP, TaskName), Resolution] =
    resolveKeyed[(SSP, TaskName)](startpoints, _._1, label)

  /** One startpoint; prefer the bulk methods when there are many. */
  def resolveOne(ssp: SSP, startpoint: Startpoint): Resolution =
    resolve(Map(ssp -> startpoint))(ssp)

  private def resolveKeyed[K](
      startpoints: Map[K, Startpoint],
      sspOf: K => SSP,
      label: K => String
  ): Map[K, Resolution] = {
    if (startpoints.isEmpty) return Map.empty
    val problems = mutable.ArrayBuffer.empty[String]

    /* Plan: which lookups each SSP needs (the match is over a sealed type: a new type cannot be
     * missed). */
    val needOldest = mutable.HashSet.empty[SSP]
    val needUpcoming = mutable.HashSet.empty[SSP]
    val timestamps = mutable.HashMap.empty[SSP, mutable.LinkedHashSet[Long]]
    val customs = mutable.HashMap.empty[String, mutable.HashMap[SSP, mutable.LinkedHashSet[Custom]]]
    val customKeys = mutable.HashMap.empty[(SSP, Custom), K] // for the resolver's errors
    val unplannable =
      mutable.HashSet.empty[K] // reported, then skipped, so other problems still surface
    startpoints.foreach { case (k, sp) =>
      val ssp = sspOf(k)
      if (ssp.system != admin.system) {
        problems += s"${label(k)}: system '${ssp.system}' is not '${admin.system}', the system this resolver asks"
        unplannable += k
      } else sp match {
        case _: Specific => needOldest += ssp; needUpcoming += ssp
        case t: Timestamp =>
          timestamps.getOrElseUpdate(ssp, mutable.LinkedHashSet.empty) += t.epochMs;
          needUpcoming += ssp
        case _: Oldest => needOldest += ssp
        case _: Upcoming => needUpcoming += ssp
        case c: Custom =>
          if (!customByKind.contains(c.kind)) {
            problems += s"${label(k)}: no resolver for custom startpoint kind '${c.kind}'" +
              (if (customByKind.isEmpty)
                 s"; name a class resolving it in option '${StartpointResolver.Resolvers.name}'"
               else s" (resolvers for: ${customByKind.keys.toSeq.sorted.mkString(", ")})")
            unplannable += k
          } else {
            customs.getOrElseUpdate(
              c.kind,
              mutable.HashMap.empty
            ).getOrElseUpdate(ssp, mutable.LinkedHashSet.empty) += c
            customKeys.getOrElseUpdate((ssp, c), k)
            needOldest += ssp; needUpcoming += ssp
          }
      }
    }

    // Timestamps first, upcoming offsets after: the end can only have grown in between, so
    // "resolved to the end" is never claimed for an offset short of the end.
    val byTimestamp = inRounds(timestamps)(round => admin.offsetsForTimestamps(round))
    val byCustom: Map[String, Map[(SSP, Custom), Long]] = customs.iterator.map {
      case (kind, perSsp) =>
        kind -> inRounds(perSsp) { round =>
          try customByKind(kind).resolve(round, admin)
          catch {
            // A user's resolver fails in its own words (a payload it cannot parse, say): name
            // the startpoints it was resolving, which its exception cannot know.
            case e: StreamctlException => throw e
            case scala.util.control.NonFatal(e) =>
              val asked = round.toSeq.sortBy(_._1).map { case (ssp, c) =>
                s"${label(customKeys((ssp, c)))} (payload '${c.payload}')"
              }
              throw StreamctlException(
                s"The resolver of custom startpoint kind '$kind' (${customByKind(kind).getClass.getName}) failed on " +
                  s"${asked.take(5).mkString(", ")}${if (asked.size > 5) s" and ${asked.size - 5} more"
                    else ""}: $e",
                e
              )
          }
        }
    }.toMap
    val oldest =
      if (needOldest.isEmpty) Map.empty[SSP, Long] else admin.oldestOffsets(needOldest.toSet)
    val upcoming =
      if (needUpcoming.isEmpty) Map.empty[SSP, Long] else admin.upcomingOffsets(needUpcoming.toSet)

    val missing = mutable.LinkedHashMap.empty[SSP, String] // SSP -> first label asking for it
    def lookup(map: collection.Map[SSP, Long], ssp: SSP, k: K): Long = map.get(ssp) match {
      case Some(o) => o
      case None => missing.getOrElseUpdate(ssp, label(k)); -1L
    }
    def inRange(k: K, ssp: SSP, offset: Long, what: String): Unit = {
      val (lo, hi) = (lookup(oldest, ssp, k), lookup(upcoming, ssp, k))
      if (lo >= 0 && hi >= 0) {
        if (offset > hi)
          problems += s"${label(k)}: $what $offset is beyond the end of the partition; valid offsets are $lo to $hi (the next offset to be written)"
        else if (offset < lo)
          problems += s"${label(k)}: $what $offset is before the oldest offset still on the broker (older messages were deleted by retention); valid offsets are $lo to $hi"
      }
    }

    val out = Map.newBuilder[K, Resolution]
    startpoints.iterator.filterNot(e => unplannable.contains(e._1)).foreach { case (k, sp) =>
      val ssp = sspOf(k)
      val resolved: Option[Resolution] = sp match {
        case s: Specific =>
          inRange(k, ssp, s.offset, "offset");
          Some(Resolution(ssp, s, s.offset, beyondData = false))
        case t: Timestamp => byTimestamp.get((ssp, t.epochMs)) match {
            case Some(o) =>
              val end = lookup(upcoming, ssp, k)
              Some(Resolution(ssp, t, o, beyondData = end >= 0 && o >= end))
            case None => missing.getOrElseUpdate(ssp, label(k)); None
          }
        case o: Oldest => Some(Resolution(ssp, o, lookup(oldest, ssp, k), beyondData = false))
        case u: Upcoming => Some(Resolution(ssp, u, lookup(upcoming, ssp, k), beyondData = false))
        case c: Custom => byCustom(c.kind).get((ssp, c)) match {
            case Some(o) =>
              inRange(k, ssp, o, s"custom startpoint '${c.kind}' resolved to offset");
              Some(Resolution(ssp, c, o, beyondData = false))
            case None =>
              problems += s"${label(k)}: the resolver of custom startpoint kind '${c.kind}' returned no offset";
              None
          }
      }
      resolved.foreach(r => out += k -> r)
    }
    missing.foreach { case (ssp, who) => problems += s"$who: ${whyNoOffsets(ssp)}" }
    fail(problems)
    out.result()
  }

  /**
   * Admin calls take one value per SSP, so distinct values for one SSP (tasks asking for different
   * times) go in successive calls; the usual single value per SSP is one call.
   */
  private def inRounds[V, R](perSsp: collection.Map[SSP, mutable.LinkedHashSet[V]])(call: Map[
    SSP,
    V
  ] => Map[SSP, R]): Map[(SSP, V), R] = {
    val result = Map.newBuilder[(SSP, V), R]
    var pending: Map[SSP, List[V]] = perSsp.iterator.map { case (ssp, vs) =>
      ssp -> vs.toList
    }.toMap
    while (pending.nonEmpty) {
      val round = pending.map { case (ssp, vs) => ssp -> vs.head }
      call(round).foreach { case (ssp, r) => round.get(ssp).foreach(v => result += (ssp, v) -> r) }
      pending = pending.collect { case (ssp, _ :: rest) if rest.nonEmpty => ssp -> rest }
    }
    result.result()
  }

  /** Asked only on the error path, to tell a missing partition from a missing stream. */
  private def whyNoOffsets(ssp: SSP): String = {
    val counts =
      try Some(admin.partitionCounts(Set(ssp.stream)))
      catch { case _: Exception => None }
    counts.flatMap(_.get(ssp.stream)) match {
      case Some(n) if !SystemAdmin.exists(ssp.partition, Some(n)) =>
        SystemAdmin.noSuchPartition(ssp.stream, ssp.partition, Some(n), "a startpoint").getMessage
      case Some(_) => s"the ${admin.system} admin returned no offsets for this partition"
      case None => s"stream '${ssp.stream}' does not exist in system '${admin.system}'"
    }
  }

  /** One problem is one line (what a CLI prints); several are listed, one per line. */
  private def fail(all: collection.Seq[String]): Unit = {
    // Copies of one startpoint for several tasks (a broadcast SSP) may be labelled alike.
    val problems = all.distinct
    if (problems.size == 1)
      throw StreamctlException(s"Cannot resolve a startpoint: ${problems.head}")
    if (problems.nonEmpty) {
      val shown = problems.take(MaxListed)
      val more =
        if (problems.size > MaxListed) s"\n  ... and ${problems.size - MaxListed} more" else ""
      throw StreamctlException(
        s"Cannot resolve ${problems.size} startpoints:\n  " + shown.mkString("\n  ") + more
      )
    }
  }
}

object StartpointResolver {

  /** Errors list this many problems, then a count: enough to see a pattern, not a wall. */
  private val MaxListed = 20

  val Resolvers: OptionSpec[Seq[String]] = OptionSpec.classNames(
    "startpoint.resolvers",
    "CustomStartpointResolver classes, comma-separated: the custom startpoint kinds this query can apply"
  )

  /**
   * The resolvers option `startpoint.resolvers` names, made with the query's options (a bad class
   * fails the query's start).
   */
  def customResolvers(options: Options): Seq[CustomStartpointResolver] =
    options.get(Resolvers).getOrElse(Nil).map(c =>
      UserClass.instantiate(Resolvers.name, c, classOf[CustomStartpointResolver], options.canonical)
    )
}
