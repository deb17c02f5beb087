package streamctl.plan

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import streamctl.StreamctlException

/**
 * Everything a source's offset carries besides positions, one typed value per feature, each kept
 * under its [[StateCodec]]'s key and written by it (the feature's state type and codec live in the
 * feature's package; `planner.SourceStates` lists them all):
 *
 *   - `grouper`: initial partition counts and expansion holds (`grouper.GroupingState`);
 *   - `chooser`: bootstrap heads and the time-aligned frontier (`chooser.ChooserState`);
 *   - `startpoints`: what the batch ending here applied (`startpoint.AppliedStartpoints`);
 *   - `control`: the batch counter and the intermediate SSPs' control states
 *     (`control.ControlState`), present when the source reads intermediate streams;
 *   - `dataLoss`: records skipped and streams recreated (`dataloss.DataLoss`);
 *   - `streamIds`: the Kafka topic ID of each stream (`dataloss.StreamIds`).
 *
 * Keyed by codec rather than a field per feature so that this contract knows no feature: a feature
 * reads its state with `state(Codec)` and sets it with `state.updated(Codec, value)`. A value the
 * codec calls empty is not kept (so states that differ only by empty values are equal, and the
 * offset text does not change when a feature has nothing to say).
 *
 * Parsed once, when the offset is; a key the given codecs do not know is an error (a newer
 * streamctl wrote it, and its bookkeeping cannot be honoured by dropping it).
 *
 * {{{
 * val chooser = plan.state(ChooserState.Codec)
 * plan.withState(_.updated(ChooserState.Codec, chooser.copy(frontier = None)))
 * }}}
 */
final class SourceState private (private val values: Map[String, SourceState.Held[_]]) {

  /** This feature's state, if the offset holds one. */
  def get[T](codec: StateCodec[T]): Option[T] = values.get(codec.key).map(_.value.asInstanceOf[T])

  /** This feature's state, or the codec's [[StateCodec.empty]] when the offset holds none. */
  def apply[T](codec: StateCodec[T]): T = get(codec).getOrElse(codec.empty)

  def updated[T](codec: StateCodec[T], value: T): SourceState =
    if (codec.isEmpty(value)) removed(codec)
    else new SourceState(values.updated(codec.key, SourceState.Held(codec, value)))

  def removed(codec: StateCodec[_]): SourceState = new SourceState(values - codec.key)

  private def read[T](codec: StateCodec[T], node: JsonNode, what: String): SourceState =
    updated(codec, codec.read(node, s"state '${codec.key}' of $what"))

  /**
   * Writes every state under its key, in key order: Spark compares offsets as text, so equal states
   * give equal text.
   */
  def write(into: ObjectNode): Unit = values.toSeq.sortBy(_._1).foreach { case (key, held) =>
    into.set[JsonNode](key, held.json)
  }

  override def equals(other: Any): Boolean = other match {
    case o: SourceState => values == o.values
    case _ => false
  }
  override def hashCode: Int = values.hashCode
  override def toString: String =
    values.values.map(h => s"${h.codec.key}=${h.value}").mkString("SourceState(", ", ", ")")
}

object SourceState {
  val empty: SourceState = new SourceState(Map.empty)

  private final case class Held[T](codec: StateCodec[T], value: T) {
    def json: JsonNode = codec.write(value)
  }

  /**
   * Reads the `state` object of an offset with the codecs of every known state; `what` names the
   * offset in errors.
   */
  def read(node: JsonNode, what: String, codecs: Seq[StateCodec[_]]): SourceState = {
    if (!node.isObject)
      throw StreamctlException(s"Malformed 'state' of $what: expected a JSON object")
    val byKey = codecs.map(c => c.key -> c).toMap[String, StateCodec[_]]
    node.properties().asScala.foldLeft(empty) { (state, e) =>
      val codec = byKey.getOrElse(
        e.getKey,
        throw StreamctlException(
          s"Unknown state '${e.getKey}' in $what (known: ${byKey.keys.toSeq.sorted.mkString(", ")}); a newer streamctl " +
            "wrote it: upgrade streamctl"
        )
      )
      state.read(codec, e.getValue, what)
    }
  }
}
