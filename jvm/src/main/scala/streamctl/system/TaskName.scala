package streamctl.system

/**
 * The name of a task: a group of SSPs read together in one Spark input partition, e.g.
 * `Partition 3`.
 */
final case class TaskName(name: String) {
  override def toString: String = name
}

object TaskName {
  implicit val ordering: Ordering[TaskName] = Ordering.by(_.name)

  /**
   * A task named by a caller (SQL, the CLI, Python) for one of `stream`'s startpoints: null or
   * absent means none (every task reading the partition); an empty name is refused, since it would
   * silently address no task.
   *
   * {{{
   * TaskName.given("Partition 3", "orders")  // Some(TaskName("Partition 3"))
   * TaskName.given(null, "orders")           // None
   * }}}
   */
  def given(name: String, stream: String): Option[TaskName] = Option(name).map { n =>
    if (n.isEmpty) throw streamctl.StreamctlException(
      s"Empty task name for stream '$stream': omit it for every task reading the partition"
    )
    TaskName(n)
  }

  /**
   * `Partition p`: the task of partition p under the default grouper (`grouper.GroupByPartition`),
   * which the compact form of the offset (`plan.SourcePosition`) relies on too.
   */
  def ofPartition(partition: Int): TaskName =
    if (partition >= 0 && partition < Cached) {
      val known = byPartition.get(partition)
      if (known != null) known
      else { val t = TaskName(Prefix + partition); byPartition.set(partition, t); t }
    } else TaskName(Prefix + partition)

  /**
   * The partition `p` when `task` is `Partition p` exactly as [[ofPartition]] writes it, else -1:
   * what the compact offset asks of every task, without formatting a name per SSP.
   */
  def partitionOf(task: TaskName): Int = {
    val name = task.name
    val n = name.length
    if (n <= Prefix.length || n > Prefix.length + 10 || !name.startsWith(Prefix)) return -1
    // `Partition 07` is not a default task name: ofPartition never writes a leading zero.
    if (name.charAt(Prefix.length) == '0' && n > Prefix.length + 1) return -1
    var p = 0L
    var i = Prefix.length
    while (i < n) {
      val c = name.charAt(i)
      if (c < '0' || c > '9') return -1
      p = p * 10 + (c - '0')
      i += 1
    }
    if (p > Int.MaxValue) -1 else p.toInt
  }

  private val Prefix = "Partition "
  /* One instance per partition number below this: planning names thousands of tasks per batch
   * (reading compact offsets), and one shared instance also compares by reference. */
  private val Cached = 1 << 14
  private val byPartition = new java.util.concurrent.atomic.AtomicReferenceArray[TaskName](Cached)
}
