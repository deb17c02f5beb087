package streamctl.planner

import streamctl.chooser.ChooserState
import streamctl.control.ControlState
import streamctl.dataloss.{DataLoss, StreamIds}
import streamctl.grouper.GroupingState
import streamctl.plan.{SourcePosition, StateCodec}
import streamctl.startpoint.AppliedStartpoints

/**
 * Every feature state a streamctl offset may carry (`plan.SourceState`), and the one reader of
 * offsets that knows them all: a feature adds its codec here. Lives above the features so that the
 * planning contract (`plan`) knows none of them.
 *
 * {{{
 * val position = SourceStates.parse(offsetJson)
 * position.state(ChooserState.Codec).bootstrapHeads
 * }}}
 */
object SourceStates {
  val codecs: Seq[StateCodec[_]] =
    Seq(
      ChooserState.Codec,
      ControlState.Codec,
      DataLoss.Codec,
      GroupingState.Codec,
      AppliedStartpoints.Codec,
      StreamIds.Codec
    )

  /** An offset as Spark logged it, with every state read. */
  def parse(json: String): SourcePosition = SourcePosition.parse(json, codecs)
}
