package streamctl.grouper

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode

import streamctl.{Json, StreamctlException}
import streamctl.plan.StateCodec
import streamctl.system.SSP

/**
 * What grouping keeps in the source's Offset (`state.grouper`), beside the positions that already
 * say which task reads which SSP:
 *
 *   - `initialPartitionCounts`: per stream, the count the job first saw; expansion maps new
 *     partitions relative to it, so it must survive every restart;
 *   - `holds`: new partitions of an expanded stream that are not read yet, each with the offsets
 *     its task's older partitions of the same stream must reach first (their heads when the growth
 *     was seen). See [[ExpansionHolds]].
 *
 * Small by construction: the mapping itself is not repeated (it is the key set of the Offset's
 * tasks), and holds exist only between an expansion and the batch that releases them.
 *
 * {{{
 * {"initialPartitionCounts":{"orders":2},"holds":{"kafka/orders/2":{"kafka/orders/0":1200
 * }}}
 * }}}
 */
final case class GroupingState(
    initialPartitionCounts: Map[String, Int],
    holds: Map[SSP, Map[SSP, Long]]
) {
  def isEmpty: Boolean = initialPartitionCounts.isEmpty && holds.isEmpty
}

object GroupingState {

  /** What an offset written before grouping kept state carries: the counts are then its own. */
  val empty: GroupingState = GroupingState(Map.empty, Map.empty)

  object Codec extends StateCodec[GroupingState] {
    val key = "grouper"
    val empty: GroupingState = GroupingState.empty

    def write(s: GroupingState): JsonNode = {
      val root = Json.obj()
      val counts = root.putObject("initialPartitionCounts")
      s.initialPartitionCounts.toSeq.sortBy(_._1).foreach { case (stream, n) =>
        counts.put(stream, n)
      }
      if (s.holds.nonEmpty) {
        val h = root.putObject("holds")
        s.holds.toSeq.sortBy(_._1).foreach { case (ssp, until) =>
          val u = h.putObject(ssp.key)
          until.toSeq.sortBy(_._1).foreach { case (o, off) => u.put(o.key, off) }
        }
      }
      root
    }

    def read(node: JsonNode, what: String): GroupingState = {
      def fail(msg: String): Nothing = throw StreamctlException(s"Malformed $what: $msg")
      // Jackson lists no properties of a number or an array: a damaged value would read as empty.
      def objectAt(n: JsonNode, path: String): JsonNode =
        if (n.isObject) n else fail(s"$path is not a JSON object")
      def sspAt(key: String, path: String): SSP =
        try SSP.parse(key)
        catch { case e: StreamctlException => fail(s"$path: ${e.getMessage}") }
      if (!node.isObject) fail("expected a JSON object")
      val counts = TaskMappingJson.initialCounts(node, what, fail)
      val holds = Option(node.get("holds")).map(h =>
        objectAt(h, "holds").properties().asScala.map { e =>
          val until = objectAt(e.getValue, s"holds.'${e.getKey}'").properties().asScala.map { u =>
            if (
              !u.getValue.isIntegralNumber || !u.getValue.canConvertToLong || u.getValue.asLong() < 0
            )
              fail(s"holds.'${e.getKey}'.'${u.getKey}' is not an offset")
            sspAt(u.getKey, s"holds.'${e.getKey}'") -> u.getValue.asLong()
          }.toMap
          sspAt(e.getKey, "holds") -> until
        }.toMap
      ).getOrElse(Map.empty)
      GroupingState(counts, holds)
    }
  }
}
