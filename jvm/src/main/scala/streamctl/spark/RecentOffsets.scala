package streamctl.spark

import streamctl.plan.SourcePosition

/**
 * The offsets a source made or read last, found again by their JSON. Spark hands a micro-batch
 * source back, as text, offsets it holds as objects: the batch's start to `latestOffset`, the
 * committed end to `commit`, the start again as it runs the batch. At 4,096 partitions each parse
 * is several milliseconds of the batch (one of them inside Spark's `latestOffset` timing). Text
 * from anywhere else (the offset log after a restart) is parsed.
 *
 * {{{
 * val offsets = new RecentOffsets(SourceStates.parse)
 * val next = offsets.made(SourceOffset(position))
 * assert(offsets.read(next.json) eq next)
 * }}}
 */
private[spark] final class RecentOffsets(parse: String => SourcePosition) {
  // Newest first; a batch's start and end, and the end before it.
  @volatile private var recent = List.empty[SourceOffset]

  /** An offset this source gives Spark. */
  def made(offset: SourceOffset): SourceOffset = synchronized {
    recent = (offset :: recent.filterNot(_ eq offset)).take(RecentOffsets.Kept)
    offset
  }

  /** The offset whose JSON is `json`: one made or read lately, else parsed. */
  def read(json: String): SourceOffset =
    recent.find(_.json == json).getOrElse(made(SourceOffset(parse(json))))
}

private object RecentOffsets {
  val Kept = 3
}
