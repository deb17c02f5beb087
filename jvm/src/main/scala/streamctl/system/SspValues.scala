package streamctl
package system

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import streamctl.{Json, StreamctlException}

/**
 * The one compact JSON form of a number per SSP (offsets, lag), per stream: an array indexed by
 * partition when the stream's partitions are `0..n-1`, as they are for a subscribed topic, else an
 * object by partition number. What is written per batch then grows by a few bytes per partition,
 * not by the length of an SSP key.
 *
 * {{{
 * val n = Json.obj()
 * SspValues.write(Map(SSP.kafka("orders", 0) -> 42L, SSP.kafka("orders", 1) -> 17L), n)
 * Json.write(n)                          // {"kafka/orders":[42,17]}
 * SspValues.read(n, "an offset")         // the same map
 * }}}
 */
object SspValues {

  /** How a stream is named as a field: `kafka/orders`. */
  def streamKey(system: String, stream: String): String = s"$system/$stream"

  /** Adds one field per stream (`system/stream`, sorted) to `into`. */
  def write(values: Map[SSP, Long], into: ObjectNode): Unit = {
    // One stream (the usual offset) needs no grouping: thousands of values are not copied.
    val first = values.headOption.map(_._1)
    val oneStream = first.exists(f =>
      values.keysIterator.forall(s => s.stream == f.stream && s.system == f.system)
    )
    val byStream =
      if (oneStream) Seq((first.get.system, first.get.stream) -> values)
      else values.groupBy { case (s, _) => (s.system, s.stream) }.toSeq.sortBy(_._1)
    byStream.foreach {
      case ((system, stream), vs) =>
        val key = streamKey(system, stream)
        // The partitions of one stream are distinct: n of them in 0..n-1 are every one of those.
        val dense = vs.keysIterator.forall(s => s.partition >= 0 && s.partition < vs.size)
        if (dense) {
          val byPartition = new Array[Long](vs.size)
          vs.foreach { case (s, v) => byPartition(s.partition) = v }
          val arr = into.putArray(key)
          byPartition.foreach(v => arr.add(v))
        } else {
          val obj = into.putObject(key)
          vs.toSeq.sortBy(_._1.partition).foreach { case (s, v) =>
            obj.put(s.partition.toString, v)
          }
        }
    }
  }

  /** Reads what [[write]] wrote; `what` names the origin in errors. */
  def read(node: JsonNode, what: String): Map[SSP, Long] =
    node.properties().asScala.iterator.flatMap { e =>
      val (system, stream) = e.getKey.split('/') match {
        case Array(sys, st) => (sys, st)
        case _ => throw StreamctlException(
            s"Not a stream key: '${e.getKey}' in $what (expected system/stream)"
          )
      }
      val v = e.getValue
      def number(n: JsonNode, at: String): Long =
        if (n.isIntegralNumber) n.asLong
        else throw StreamctlException(s"Not a whole number at ${e.getKey} $at in $what: $n")
      if (v.isArray) v.elements().asScala.zipWithIndex.map { case (n, p) =>
        SSP(system, stream, p) -> number(n, s"partition $p")
      }
      else if (v.isObject) v.properties().asScala.iterator.map { p =>
        val partition = p.getKey.toIntOption.filter(_ >= 0)
          .getOrElse(throw StreamctlException(
            s"Not a partition number: '${p.getKey}' of ${e.getKey} in $what"
          ))
        SSP(system, stream, partition) -> number(p.getValue, s"partition $partition")
      }
      else
        throw StreamctlException(s"Expected an array or object at ${e.getKey} in $what, found $v")
    }.toMap

  /** Convenience for a whole node of [[write]]'s fields. */
  def json(values: Map[SSP, Long]): ObjectNode = { val n = Json.obj(); write(values, n); n }

  /**
   * The form of a per-SSP figure in a source's progress metrics (`recordsBehindHead`,
   * `secondsBehind`...): by the SSP's name, as people read it, sorted.
   *
   * {{{
   * Json.write(SspValues.byName(Map(SSP.kafka("orders", 0) -> 42L)))   // {"orders-0":42}
   * }}}
   */
  def byName(values: Map[SSP, Long]): ObjectNode = {
    val n = Json.obj()
    values.toSeq.sortBy(_._1).foreach { case (ssp, v) => n.put(ssp.toString, v) }
    n
  }
}
