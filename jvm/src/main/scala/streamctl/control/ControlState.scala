package streamctl.control

import com.fasterxml.jackson.databind.JsonNode

import streamctl.{Json, StreamctlException}
import streamctl.control.SspControlStates.States
import streamctl.plan.StateCodec

/**
 * The control part of a source's offset (state `control`): the batch counter `seq` of the batch
 * that ends at the offset, and the control states of the source's intermediate SSPs at that batch's
 * start (after the previous batch). Readers of batch `seq` start from `states` and record their
 * results under `seq`; planning batch `seq + 1` merges them in.
 *
 * {{{
 * {"seq":7,"ssps":{"kafka/mid/0":{"n":3,"eos":["p0"],"wm":{"p1":10}
 * }}}
 * }}}
 */
final case class ControlState(seq: Long, states: States)

object ControlState {

  /** What a query's first offset carries: no batch yet, nothing heard. */
  val initial: ControlState = ControlState(0L, Map.empty)

  object Codec extends StateCodec[ControlState] {
    val key = "control"
    val empty: ControlState = initial
    /* Written even at its start: a source that reads intermediate streams always carries its batch
     * counter. */
    override def isEmpty(c: ControlState): Boolean = false

    def write(c: ControlState): JsonNode = {
      val node = Json.obj()
      node.put("seq", c.seq)
      node.set[JsonNode]("ssps", SspControlStates.toJson(c.states))
      node
    }

    def read(node: JsonNode, what: String): ControlState = {
      val seq = Json.field(node, "seq", what)
      if (!seq.canConvertToLong || seq.asLong < 0)
        throw StreamctlException(s"Bad 'seq' in $what: $seq")
      ControlState(seq.asLong, SspControlStates.fromJson(Json.field(node, "ssps", what), what))
    }
  }
}
