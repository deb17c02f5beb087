package streamctl.spark

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode

import streamctl.{Json, StreamctlException}
import streamctl.system.SSP

/**
 * What grouping keeps in the source's Offset (`state.grouper`), beside the positions that
 * already say which task reads which SSP:
 *
 *  - `initialPartitionCounts`: per stream, the count the job first saw; expansion maps new
 *    partitions relative to it, so it must survive every restart;
 *  - `holds`: new partitions of an expanded stream that are not read yet, each with the
 *    offsets its task's older partitions of the same stream must reach first (their heads
 *    when the growth was seen). See [[ExpansionHolds]].
 *
 * Small by construction: the mapping itself is not repeated (it is the key set of the
 * Offset's tasks), and holds exist only between an expansion and the batch that releases them.
 *
 * {{{
 * {"initialPartitionCounts":{"orders":2},"holds":{"kafka/orders/2":{"kafka/orders/0":1200}}}
 * }}}
 */
final case class GroupingState(initialPartitionCounts: Map[String, Int], holds: Map[SSP, Map[SSP, Long]]) {
  def toJson: JsonNode = {
    val root = Json.obj()
    val counts = root.putObject("initialPartitionCounts")
    initialPartitionCounts.toSeq.sortBy(_._1).foreach { case (s, n) => counts.put(s, n) }
    if (holds.nonEmpty) {
      val h = root.putObject("holds")
      holds.toSeq.sortBy(_._1).foreach { case (ssp, until) =>
        val u = h.putObject(ssp.key)
        until.toSeq.sortBy(_._1).foreach { case (o, off) => u.put(o.key, off) }
      }
    }
    root
  }
}

object GroupingState {
  /** The key of this state in [[SourceOffset.state]]. */
  val Key = "grouper"

  /** The state recorded in an Offset, or None when it has none (a checkpoint written before grouping kept state). */
  def of(state: Map[String, JsonNode]): Option[GroupingState] = state.get(Key).map(parse)

  private def parse(node: JsonNode): GroupingState = {
    val what = s"state '$Key' of the streamctl offset in the query checkpoint"
    def fail(msg: String): Nothing = throw StreamctlException(s"Malformed $what: $msg")
    if (!node.isObject) fail("expected a JSON object")
    val counts = Json.field(node, "initialPartitionCounts", what).properties().asScala.map { e =>
      if (!e.getValue.isInt || e.getValue.intValue <= 0) fail(s"initialPartitionCounts.'${e.getKey}' is not a positive integer")
      e.getKey -> e.getValue.intValue
    }.toMap
    val holds = Option(node.get("holds")).map(_.properties().asScala.map { e =>
      SSP.parse(e.getKey) -> e.getValue.properties().asScala.map { u =>
        if (!u.getValue.canConvertToLong) fail(s"holds.'${e.getKey}'.'${u.getKey}' is not an offset")
        SSP.parse(u.getKey) -> u.getValue.asLong()
      }.toMap
    }.toMap).getOrElse(Map.empty)
    GroupingState(counts, holds)
  }
}
