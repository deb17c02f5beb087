package streamctl.grouper

import streamctl.StreamctlException
import streamctl.system.{SSP, TaskName}

/**
 * Verifies what a grouper returned before anything relies on it. Built-in groupers cannot fail
 * these checks; a user grouper can, and a silent mistake here would move keys between tasks or drop
 * a partition, which nobody would notice until the counts were wrong.
 */
private[grouper] object GrouperOutputCheck {
  // Exact classes, not subtypes: a user subclass may override `group`.
  private val builtIns: Set[Class[_]] =
    Set(
      classOf[GroupByPartition],
      classOf[GroupBySystemStreamPartition],
      classOf[AllSspToSingleTask]
    )

  /**
   * Built-in groupers keep `previous` by construction; checking them would only cost time at
   * 100,000 SSPs.
   */
  def needed(grouper: SystemStreamPartitionGrouper): Boolean = !builtIns.contains(grouper.getClass)

  def apply(
      grouperName: String,
      fixed: Map[SSP, TaskName],
      ssps: Set[SSP],
      result: Map[TaskName, Set[SSP]]
  ): Unit = {
    def fail(msg: String): Nothing =
      throw StreamctlException(s"Grouper '$grouperName' returned an invalid grouping: $msg")

    if (result == null) fail("null")
    val seen = new java.util.HashMap[SSP, TaskName](ssps.size * 2)
    for ((task, group) <- result) {
      if (task == null || task.name == null || task.name.isEmpty) fail("a task has no name")
      if (group == null) fail(s"task '$task' has a null SSP set")
      for (ssp <- group) {
        if (ssp == null) fail(s"task '$task' has a null SSP")
        if (!ssps.contains(ssp))
          fail(s"task '$task' has SSP ${ssp.key}, which it was not asked to group")
        val other = seen.put(ssp, task)
        if (other != null) fail(s"SSP ${ssp.key} is in two tasks, '$other' and '$task'")
        fixed.get(ssp) match {
          case Some(kept) if kept != task =>
            fail(
              s"SSP ${ssp.key} moved from task '$kept' to '$task'; a grouper must keep every SSP of " +
                "the previous mapping on its task"
            )
          case _ =>
        }
      }
    }
    if (seen.size != ssps.size) {
      val missing = ssps.iterator.filterNot(seen.containsKey).map(_.key).take(5).mkString(", ")
      fail(s"${ssps.size - seen.size} SSP(s) are in no task, e.g. $missing")
    }
  }
}
