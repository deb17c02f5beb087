package streamctl.system

/**
 * What the planner needs to know about a system, answered by its admin side.
 * Offsets follow Kafka's meaning: `oldest` is the first offset still on the broker,
 * `upcoming` is the offset the next written message will get (the end of the partition).
 *
 * Pure logic (startpoint resolution, groupers) depends on this trait, never on Kafka.
 */
trait SystemAdmin {
  def system: String

  /** Partition count per stream; a stream that does not exist is an error naming it. */
  def partitionCounts(streams: Set[String]): Map[String, Int]

  def oldestOffsets(ssps: Set[SSP]): Map[SSP, Long]

  def upcomingOffsets(ssps: Set[SSP]): Map[SSP, Long]

  /** First offset whose timestamp is >= the given epoch ms; the upcoming offset when there is none. */
  def offsetsForTimestamps(timestamps: Map[SSP, Long]): Map[SSP, Long]
}
