package streamctl.spark

import org.apache.spark.sql.connector.read.streaming.Offset

import streamctl.plan.SourcePosition

/**
 * A source's offsets as Spark hands them over, with the ones it made or read last found again by
 * their JSON. Spark hands a micro-batch source back, as text, offsets it holds as objects: the
 * batch's start to `latestOffset`, the committed end to `commit`, the start again as it runs the
 * batch. At 4,096 partitions each parse is several milliseconds of the batch (one of them inside
 * Spark's `latestOffset` timing). Text from anywhere else (the offset log after a restart) is
 * parsed.
 *
 * {{{
 * val offsets = new RecentOffsets(SourceStates.parse)
 * val next = offsets.made(position)
 * assert(offsets.read(next.json) eq next)
 * }}}
 */
private[spark] final class RecentOffsets(parse: String => SourcePosition) {
  // Newest first; a batch's start and end, and the end before it.
  @volatile private var recent = List.empty[SourceOffset]

  /** The offset this source gives Spark for `position`. */
  def made(position: SourcePosition): Offset = remember(SourceOffset(position))

  /** The offset whose JSON is `json` (Spark's `deserializeOffset`). */
  def read(json: String): Offset = find(json)

  /** The position an offset from Spark stands for. */
  def position(offset: Offset): SourcePosition = offset match {
    case s: SourceOffset => s.position
    case other => find(other.json()).position
  }

  private def find(json: String): SourceOffset =
    recent.find(_.json == json).getOrElse(remember(SourceOffset(parse(json))))

  private def remember(offset: SourceOffset): SourceOffset = synchronized {
    recent = (offset :: recent).take(RecentOffsets.Kept)
    offset
  }
}

private object RecentOffsets {
  val Kept = 3
}
