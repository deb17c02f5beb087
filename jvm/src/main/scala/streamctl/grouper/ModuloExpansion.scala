package streamctl.grouper

import streamctl.StreamctlException

/**
 * The default expansion: new partition `p` joins the task of partition `p % initialCount`.
 *
 * Kafka's default partitioner sends a key to `hash % count`; when `count` is a multiple of
 * `initialCount`, `hash % count % initialCount == hash % initialCount`, so every key keeps reaching
 * its original task. The test is against the initial count, not the previous one, so 2 -> 4 -> 6 is
 * accepted (6 is a multiple of 2) and chained growth needs no history.
 *
 * {{{
 * new ModuloExpansion().originPartition("orders", 5, initialCount = 2, newCount = 8) // 1
 * }}}
 */
class ModuloExpansion extends PartitionExpansionAlgorithm {
  override def check(stream: String, initialCount: Int, previousCount: Int, newCount: Int): Unit =
    if (newCount % initialCount != 0)
      throw StreamctlException(
        s"Stream '$stream' grew from $previousCount to $newCount partitions, which is not a multiple of its " +
          s"initial count $initialCount: keys would move between tasks. Grow it to a multiple of $initialCount " +
          "or set option partition.expansion.algorithm to a class that accepts this."
      )

  override def originPartition(
      stream: String,
      partition: Int,
      initialCount: Int,
      newCount: Int
  ): Int =
    partition % initialCount
}
