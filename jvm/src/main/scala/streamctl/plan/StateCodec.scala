package streamctl.plan

import com.fasterxml.jackson.databind.JsonNode

/**
 * How one feature's state is kept in the source's offset ([[SourceState]]): under `key`, as the
 * JSON `write` makes, read back by `read`. Every feature's state has one, in the feature's own
 * package, and they are all used the same way: [[SourcePosition.parse]] reads each state once when
 * Spark hands over a logged offset (given every codec, `planner.SourceStates`), and
 * [[SourceState.write]] writes them again in key order.
 *
 * Versioning: the offset's `version` (see [[SourcePosition.Version]]) covers every state. A codec
 * that changes its format adds fields a reader may lack (older offsets still parse), or, when that
 * cannot work, bumps that version and reads both forms. A state that is empty by `isEmpty` is left
 * out of the offset, so an offset of a query that never used a feature reads as it did before the
 * feature existed.
 *
 * {{{
 * object Codec extends StateCodec[ChooserState] {
 *   val key = "chooser"
 *   val empty = ChooserState.empty
 *   def write(s: ChooserState) = ...
 *   def read(node: JsonNode, what: String) = ...
 * }
 * }}}
 */
trait StateCodec[T] {
  def key: String

  /**
   * The state of a feature that has nothing recorded (what [[SourceState.apply]] gives when the
   * offset holds none).
   */
  def empty: T
  def write(value: T): JsonNode

  /** Reads what [[write]] wrote; `what` names where it came from in errors. */
  def read(node: JsonNode, what: String): T

  /** A state the offset leaves out; by default, one equal to [[empty]]. */
  def isEmpty(value: T): Boolean = value == empty
}
