package streamctl.chooser

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode

import streamctl.Json
import streamctl.plan.StateCodec
import streamctl.system.SSP

/**
 * The chooser's part of the source offset (`state.chooser`), logged with every batch so a restart
 * and a replay see the same values:
 *   - `bootstrapHeads`: per bootstrap SSP, the head offset it had when the query started (or when
 *     the SSP first appeared); bootstrapping ends when every one is reached;
 *   - `frontier`: the event time the last time-aligned batch reached, where the next batch's search
 *     starts.
 *
 * {{{
 * {"bootstrapHeads":{"kafka/currency-codes/0":42},"frontier":1700000000000}
 * }}}
 */
final case class ChooserState(bootstrapHeads: Map[SSP, Long], frontier: Option[Long]) {
  def isEmpty: Boolean = bootstrapHeads.isEmpty && frontier.isEmpty
}

object ChooserState {
  val empty: ChooserState = ChooserState(Map.empty, None)

  object Codec extends StateCodec[ChooserState] {
    val key = "chooser"
    val empty: ChooserState = ChooserState.empty

    def write(s: ChooserState): JsonNode = {
      val root = Json.obj()
      if (s.bootstrapHeads.nonEmpty) {
        val h = root.putObject("bootstrapHeads")
        s.bootstrapHeads.toSeq.sortBy(_._1).foreach { case (ssp, o) => h.put(ssp.key, o) }
      }
      s.frontier.foreach(root.put("frontier", _))
      root
    }

    def read(node: JsonNode, what: String): ChooserState = {
      val heads = Option(node.get("bootstrapHeads")).map(_.properties().asScala.map(e =>
        SSP.parse(e.getKey) -> e.getValue.asLong()
      ).toMap)
      ChooserState(
        heads.getOrElse(Map.empty),
        Option(node.get("frontier")).filter(!_.isNull).map(_.asLong())
      )
    }
  }
}
