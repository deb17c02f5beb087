package streamctl.dataloss

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode

import streamctl.{Json, StreamctlException}
import streamctl.plan.StateCodec
import streamctl.system.StreamDescription

/**
 * The Kafka topic ID of each stream a source reads, recorded with its offsets (state `streamIds`):
 * offsets only mean something in the topic they were read from, and a topic deleted and created
 * again under the same name gets a new ID. A checkpoint written before IDs were recorded has none;
 * they are recorded at the next check without complaint.
 *
 * {{{
 * val recorded = StreamIds(Map("orders" -> "Rk7HzQ0xT0yH9cQm1sJ5Ag"))
 * recorded.recreatedIn(admin.describeStreams(Set("orders"))) // Seq(Recreation(...)) when the ID changed
 * }}}
 */
final case class StreamIds(ids: Map[String, String]) {

  /** Streams whose ID differs now from the recorded one. */
  def recreatedIn(now: Map[String, StreamDescription]): Seq[Recreation] =
    ids.toSeq.sorted.flatMap { case (stream, before) =>
      now.get(stream).flatMap(_.id).filter(_ != before).map(Recreation(stream, before, _))
    }

  /**
   * The IDs to record after `now` was seen: its IDs win; a stream it has no ID for keeps the
   * recorded one.
   */
  def updated(now: Map[String, StreamDescription]): StreamIds =
    StreamIds(ids ++ now.collect { case (s, StreamDescription(_, Some(id))) => s -> id })

  /** Without the IDs of `streams` (deleted: one created again under the name is a new stream). */
  def without(streams: Iterable[String]): StreamIds =
    if (streams.isEmpty) this else StreamIds(ids -- streams)

}

object StreamIds {
  val empty: StreamIds = StreamIds(Map.empty)

  object Codec extends StateCodec[StreamIds] {
    val key = "streamIds"
    val empty: StreamIds = StreamIds.empty

    def write(s: StreamIds): JsonNode = {
      val root = Json.obj()
      s.ids.toSeq.sorted.foreach { case (stream, id) => root.put(stream, id) }
      root
    }

    def read(node: JsonNode, what: String): StreamIds = {
      if (!node.isObject)
        throw StreamctlException(s"Malformed $what: expected a JSON object of stream -> topic ID")
      StreamIds(node.properties().asScala.map(e => e.getKey -> e.getValue.asText()).toMap)
    }
  }
}
