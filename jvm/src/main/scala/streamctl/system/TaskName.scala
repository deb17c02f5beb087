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
   * `Partition p`: the task of partition p under the default grouper (`grouper.GroupByPartition`),
   * which the compact form of the offset (`plan.SourcePosition`) relies on too.
   */
  def ofPartition(partition: Int): TaskName = TaskName(s"Partition $partition")
}
