package streamctl.control

/**
 * [[ControlStates.taskWatermark]] as a value that can be folded and combined, so a reader
 * can join the SSPs it reads live with the query's other SSPs (as of the batch start)
 * without walking all of them on every control message. For any split of a set of states,
 * `of(a) ++ of(b)` has the same watermark as `ControlStates.taskWatermark(a ++ b)`.
 *
 * {{{
 * val others = WatermarkSummary.of(statesOfOtherTasks)       // once per batch, on the driver
 * val rowWatermark = (WatermarkSummary.of(myLiveStates) ++ others).watermark
 * }}}
 */
final case class WatermarkSummary(
    /** A live (not ended) SSP without a watermark: the whole is undefined. */
    undefined: Boolean,
    anyLive: Boolean,
    liveMin: Long,
    anyEnded: Boolean,
    endedMax: Long) {

  def add(s: ControlState): WatermarkSummary =
    if (s.isEndOfStream) s.watermark.fold(this)(w => copy(anyEnded = true, endedMax = math.max(endedMax, w)))
    else s.watermark match {
      case None => copy(undefined = true)
      case Some(w) => copy(anyLive = true, liveMin = math.min(liveMin, w))
    }

  def ++(o: WatermarkSummary): WatermarkSummary = WatermarkSummary(
    undefined || o.undefined, anyLive || o.anyLive, math.min(liveMin, o.liveMin),
    anyEnded || o.anyEnded, math.max(endedMax, o.endedMax))

  /** Live SSPs hold it at their minimum; ended ones count only when nothing is live. */
  def watermark: Option[Long] =
    if (undefined) None else if (anyLive) Some(liveMin) else if (anyEnded) Some(endedMax) else None
}

object WatermarkSummary {
  val empty: WatermarkSummary = WatermarkSummary(undefined = false, anyLive = false, Long.MaxValue, anyEnded = false, Long.MinValue)

  def of(states: Iterable[ControlState]): WatermarkSummary = states.foldLeft(empty)(_ add _)
}
