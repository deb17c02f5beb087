package streamctl.control

/**
 * The watermark over several intermediate SSPs (a task's, or a whole source's), as a value that can
 * be folded and combined, so a reader can join the SSPs it reads live with the query's other SSPs
 * (as of the batch start) without walking all of them on every control message. For any split of a
 * set of states, `of(a) ++ of(b)` has the same watermark as `of(a ++ b)`.
 *
 * The rule, one level above [[SspControlState]]'s: the minimum over the live SSPs, undefined while
 * any live SSP is. An SSP at end-of-stream, or whose producers are all idle
 * ([[SspControlState.isIdle]]), brings nothing for now and does not hold the others back; when no
 * SSP is live the watermark is the highest of theirs. Non-intermediate SSPs have no state and take
 * no part.
 *
 * {{{
 * val others = WatermarkSummary.of(statesOfOtherTasks)       // once per batch, on the driver
 * val rowWatermark = (WatermarkSummary.of(myLiveStates) ++ others).watermark
 * }}}
 */
final case class WatermarkSummary(
    /** A live SSP without a watermark: the whole is undefined. */
    undefined: Boolean,
    anyLive: Boolean,
    liveMin: Long,
    /** Some SSP at end-of-stream or idle has a watermark. */
    anyQuiet: Boolean,
    quietMax: Long
) {

  def add(s: SspControlState): WatermarkSummary =
    if (s.isEndOfStream || s.isIdle)
      s.watermark.fold(this)(w => copy(anyQuiet = true, quietMax = math.max(quietMax, w)))
    else s.watermark match {
      case None => copy(undefined = true)
      case Some(w) => copy(anyLive = true, liveMin = math.min(liveMin, w))
    }

  def ++(o: WatermarkSummary): WatermarkSummary = WatermarkSummary(
    undefined || o.undefined,
    anyLive || o.anyLive,
    math.min(liveMin, o.liveMin),
    anyQuiet || o.anyQuiet,
    math.max(quietMax, o.quietMax)
  )

  /** Live SSPs hold it at their minimum; quiet ones count only when nothing is live. */
  def watermark: Option[Long] =
    if (undefined) None else if (anyLive) Some(liveMin) else if (anyQuiet) Some(quietMax) else None
}

object WatermarkSummary {
  val empty: WatermarkSummary = WatermarkSummary(
    undefined = false,
    anyLive = false,
    Long.MaxValue,
    anyQuiet = false,
    Long.MinValue
  )

  def of(states: Iterable[SspControlState]): WatermarkSummary = states.foldLeft(empty)(_ add _)
}
