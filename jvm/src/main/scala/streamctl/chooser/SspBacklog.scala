package streamctl.chooser

/**
 * What the planner knows about one SSP when it plans a batch.
 *
 * @param start
 *   next offset to read (the previous batch's end)
 * @param head
 *   offset the next written record will get, as of now
 * @param startTimestamp
 *   timestamp of the record at `start` if known, else -1; only speeds up time-aligned planning (the
 *   previous batch's frontier is a fine value)
 */
final case class SspBacklog(start: Long, head: Long, startTimestamp: Long = -1L) {
  def available: Long = math.max(0L, head - start)
}
