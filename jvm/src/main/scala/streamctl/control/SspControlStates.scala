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
