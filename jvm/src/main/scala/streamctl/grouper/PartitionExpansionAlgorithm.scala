package streamctl.grouper

/**
 * Decides which existing partition a new partition of a grown stream is read with, so that keys
 * keep reaching the task they always reached. Selected by the source option
 * `partition.expansion.algorithm` (default [[ModuloExpansion]]); a user class needs a public
 * no-argument constructor.
 *
 * [[Grouping]] calls `check` once per grown stream, then `originPartition` for each new partition,
 * and puts the new partition on the task of its origin. Shrinking is refused before either is
 * called: no algorithm can keep keys of a deleted partition in place.
 *
 * {{{
 * // A producer that only sends brand-new keys to added partitions: any task will do.
 * class ToFirstPartition extends PartitionExpansionAlgorithm {
 *   def originPartition(stream: String, partition: Int, initialCount: Int, newCount: Int): Int = 0
 * }
 * }}}
 */
trait PartitionExpansionAlgorithm {

  /**
   * Throws a [[streamctl.StreamctlException]] naming the stream and counts when growing `stream`
   * from `previousCount` to `newCount` partitions would move keys between tasks. `initialCount` is
   * the count the job first saw, `previousCount` the one in the mapping.
   */
  def check(stream: String, initialCount: Int, previousCount: Int, newCount: Int): Unit = ()

  /**
   * The partition, below `previousCount`, whose task the new `partition` (`>= previousCount`,
   * `< newCount`) joins. It must only depend on its arguments: the planner recomputes it after a
   * crash and must get the same answer.
   */
  def originPartition(stream: String, partition: Int, initialCount: Int, newCount: Int): Int
}
