package streamctl.grouper

/** The name of a task: a group of SSPs read together in one Spark input partition, e.g. `Partition 3`. */
final case class TaskName(name: String) {
  override def toString: String = name
}

object TaskName {
  implicit val ordering: Ordering[TaskName] = Ordering.by(_.name)
}
