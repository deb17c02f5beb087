package streamctl.plan

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import streamctl.StreamctlException
import streamctl.chooser.ChooserState
import streamctl.control.ControlOffset
import streamctl.grouper.GroupingState
import streamctl.startpoint.AppliedStartpoints

/**
 * Everything a source's offset carries besides positions, one typed value per feature, each
 * written by the feature's [[StateCodec]] under its key:
 *
 *  - `grouper`: initial partition counts and expansion holds ([[GroupingState]]);
 *  - `chooser`: bootstrap heads and the time-aligned frontier ([[ChooserState]]);
 *  - `startpoints`: what the batch ending here applied ([[AppliedStartpoints]]);
 *  - `control`: the batch counter and the intermediate SSPs' control states ([[ControlOffset]]),
 *    present when the source reads intermediate streams;
 *  - `dataLoss`: records skipped and streams recreated ([[DataLoss]]);
 *  - `streamIds`: the Kafka topic ID of each stream ([[StreamIds]]).
 *
 * Parsed once, when the offset is; a key this streamctl does not know is an error (a newer
 * streamctl wrote it, and its bookkeeping cannot be honoured by dropping it).
 */
final case class SourceState(
    grouping: GroupingState = GroupingState.empty,
    chooser: ChooserState = ChooserState.empty,
    startpoints: AppliedStartpoints = AppliedStartpoints.empty,
    control: Option[ControlOffset] = None,
    dataLoss: DataLoss = DataLoss.empty,
    streamIds: StreamIds = StreamIds.empty)

object SourceState {
  val empty: SourceState = SourceState()

  /** One state: its codec, and how it is taken from and put into a [[SourceState]]. */
  private final case class Field[T](codec: StateCodec[T], get: SourceState => Option[T], set: (SourceState, T) => SourceState) {
    def write(state: SourceState, into: ObjectNode): Unit =
      get(state).filterNot(codec.isEmpty).foreach(v => into.set[JsonNode](codec.key, codec.write(v)))
    def read(state: SourceState, node: JsonNode, what: String): SourceState =
      set(state, codec.read(node, s"state '${codec.key}' of $what"))
  }

  // In key order: the JSON is compared as text by Spark, so equal states must give equal text.
  private val fields: Seq[Field[_]] = Seq[Field[_]](
    Field[ChooserState](ChooserState.Codec, s => Some(s.chooser), (s, v) => s.copy(chooser = v)),
    Field[ControlOffset](ControlOffset.Codec, _.control, (s, v) => s.copy(control = Some(v))),
    Field[DataLoss](DataLoss.Codec, s => Some(s.dataLoss), (s, v) => s.copy(dataLoss = v)),
    Field[GroupingState](GroupingState.Codec, s => Some(s.grouping), (s, v) => s.copy(grouping = v)),
    Field[AppliedStartpoints](AppliedStartpoints.Codec, s => Some(s.startpoints), (s, v) => s.copy(startpoints = v)),
    Field[StreamIds](StreamIds.Codec, s => Some(s.streamIds), (s, v) => s.copy(streamIds = v))
  ).sortBy(_.codec.key)

  private val byKey: Map[String, Field[_]] = fields.map(f => f.codec.key -> f).toMap

  def write(state: SourceState, into: ObjectNode): Unit = fields.foreach(_.write(state, into))

  /** Reads the `state` object of an offset; `what` names the offset in errors. */
  def read(node: JsonNode, what: String): SourceState = {
    if (!node.isObject) throw StreamctlException(s"Malformed 'state' of $what: expected a JSON object")
    node.properties().asScala.foldLeft(empty) { (state, e) =>
      val field = byKey.getOrElse(e.getKey, throw StreamctlException(
        s"Unknown state '${e.getKey}' in $what (known: ${byKey.keys.toSeq.sorted.mkString(", ")}); a newer streamctl " +
          "wrote it: upgrade streamctl"))
      field.read(state, e.getValue, what)
    }
  }
}
