package streamctl
package control

import scala.collection.immutable.SortedMap
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import streamctl.{Json, StreamctlException}
import streamctl.system.SSP

/**
 * Control bookkeeping of many SSPs (a query's, or one task's), as the driver carries it from batch
 * to batch in the source's Offset.
 *
 * The driver's step for batch N+1: `merge(previous +: taskResultsOfBatchN)`. Because
 * [[SspControlState.merge]] is a union/maximum, including the previous state is harmless (every
 * task result started from it) and keeps SSPs no task read this batch.
 *
 * {{{
 * val next  = SspControlStates.merge(Seq(previous, resultOfTask0, resultOfTask1))
 * val json  = SspControlStates.toJson(next)                 // nest into the Offset JSON
 * val again = SspControlStates.fromJson(json, "offset log batch 12")
 * SspControlStates.allEndOfStream(next.keys, next.get)
 * }}}
 */
object SspControlStates {
  type States = Map[SSP, SspControlState]

  /** Order-independent and idempotent combination of per-task (or per-batch) results. */
  def merge(results: Iterable[States]): States = {
    val out = scala.collection.mutable.HashMap.empty[SSP, SspControlState]
    results.foreach(_.foreach { case (ssp, s) =>
      out.update(ssp, out.get(ssp).fold(s)(_.merge(s, ssp)))
    })
    out.toMap
  }

  /**
   * `states` with every producer that ended a stream before one of `ssps` was added to it counted
   * as ended there too. An end-of-stream goes to every partition the stream has when it is sent and
   * says how many that was (`SspControlState.endedWithin`); a partition numbered at or above that
   * count was added later, so that producer never wrote to it and never will: without this, a
   * reader of a stream that grew after one of its producers ended would wait there for good. Where
   * several end-of-streams of one producer disagree (a resend after the stream grew), the highest
   * count counts. SSPs of streams no end-of-stream spoke for are left out, and cost nothing when
   * there are none.
   *
   * {{{
   * // "a" ended orders-mid when it had 2 partitions; partition 3 was added afterwards
   * SspControlStates.withEndsBeforeGrowth(states, Seq(SSP.kafka("orders-mid", 3)))
   * }}}
   */
  def withEndsBeforeGrowth(states: States, ssps: Iterable[SSP]): States = {
    // stream -> (producer count, producer -> the highest count its end-of-stream went to)
    val ends = scala.collection.mutable.HashMap.empty[(String, String), (Int, Map[String, Int])]
    states.foreach { case (ssp, s) =>
      if (s.endedWithin.nonEmpty) {
        val stream = (ssp.system, ssp.stream)
        val (_, before) = ends.getOrElse(stream, (s.producerCount, Map.empty[String, Int]))
        ends.update(
          stream,
          (
            s.producerCount,
            s.endedWithin.foldLeft(before) { case (m, (p, n)) =>
              m.updated(p, math.max(n, m.getOrElse(p, 0)))
            }
          )
        )
      }
    }
    if (ends.isEmpty) states
    else ssps.foldLeft(states) { (out, ssp) =>
      ends.get((ssp.system, ssp.stream)) match {
        case Some((count, ended)) =>
          val before = ended.filter { case (_, n) => ssp.partition >= n }
          if (before.isEmpty) out
          else {
            val state = out.getOrElse(ssp, SspControlState.empty)
            val grown = state.withEnded(before, count, ssp)
            if (grown eq state) out else out.updated(ssp, grown)
          }
        case None => out
      }
    }
  }

  /**
   * True when there is at least one of `ssps` and every one is at end-of-stream by `stateOf` (an
   * SSP without a state, such as a plain stream's, never is): nothing more can come.
   */
  def allEndOfStream(ssps: Iterable[SSP], stateOf: SSP => Option[SspControlState]): Boolean =
    ssps.nonEmpty && ssps.forall(s => stateOf(s).exists(_.isEndOfStream))

  /** `{"kafka/orders/0":{"n":3,...},...}`, keys sorted so equal states give equal text. */
  def toJson(states: States): ObjectNode = {
    val node = Json.obj()
    SortedMap.from(states).foreach { case (ssp, s) => node.set[JsonNode](ssp.key, s.toJson) }
    node
  }

  def write(states: States): String = Json.write(toJson(states))

  /** Reads what [[toJson]] wrote; `what` names the origin in errors. */
  def fromJson(node: JsonNode, what: String): States = {
    if (node == null || !node.isObject)
      throw StreamctlException(s"Bad control states in $what: not a JSON object")
    node.properties.asScala.map { e =>
      val ssp =
        try SSP.parse(e.getKey)
        catch {
          case x: StreamctlException =>
            throw StreamctlException(s"Bad control states in $what: ${x.getMessage}", x)
        }
      ssp -> SspControlState.fromJson(e.getValue, s"$what, ${ControlErrors.where(ssp)}")
    }.toMap
  }

  def parse(text: String, what: String): States = fromJson(Json.parse(text, what), what)
}
