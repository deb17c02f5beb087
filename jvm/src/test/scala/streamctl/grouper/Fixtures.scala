package streamctl.grouper

import streamctl.system.{SSP, TaskName}

/** Helpers shared by the grouper tests. */
object Fixtures {
  def ssps(stream: String, count: Int): Set[SSP] = (0 until count).map(SSP.kafka(stream, _)).toSet

  def t(name: String): TaskName = TaskName(name)

  def p(n: Int): TaskName = GroupByPartition.taskName(n)

  def config(options: (String, String)*)(streams: String*): GrouperConfig =
    GrouperConfig.parse(options.toMap, streams)

  /** The single task of a non-broadcast SSP, failing loudly if it has none or several. */
  def taskOf(m: TaskMapping, stream: String, partition: Int): TaskName = {
    val ts = m.tasksOf(SSP.kafka(stream, partition))
    assert(ts.size == 1, s"$stream-$partition is in tasks $ts")
    ts.head
  }
}

// User classes loaded by name in GrouperConfigTest and GroupingTest.

class ReversedGrouper extends SystemStreamPartitionGrouper {
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    ssps.groupBy(ssp => previous.getOrElse(ssp, TaskName(s"Reversed ${ssp.partition}")))
}

class OptionsGrouper(options: Map[String, String]) extends SystemStreamPartitionGrouper {
  val prefix: String = options.getOrElse("my.prefix", "none")
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    ssps.groupBy(ssp => previous.getOrElse(ssp, TaskName(s"$prefix ${ssp.partition}")))
}

/** Reads an option of its own, as a source passes it: `grouper.option.prefix`. */
class OwnOptionGrouper(options: Map[String, String])
    extends OptionsGrouper(Map("my.prefix" -> options("grouper.option.prefix")))

/** Ignores `previous`: the check must catch it moving an SSP. */
class ForgetfulGrouper extends SystemStreamPartitionGrouper {
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    ssps.groupBy(ssp => TaskName(s"Fresh ${ssp.partition}"))
}

class DroppingGrouper extends SystemStreamPartitionGrouper {
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    Map(TaskName("Some") -> ssps.filter(_.partition == 0))
}

class DuplicatingGrouper extends SystemStreamPartitionGrouper {
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    Map(TaskName("A") -> ssps, TaskName("B") -> ssps.take(1))
}

class InventingGrouper extends SystemStreamPartitionGrouper {
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    Map(TaskName("A") -> (ssps + SSP.kafka("ghost", 0)))
}

class ThrowingGrouper extends SystemStreamPartitionGrouper {
  throw new IllegalStateException("boom in constructor")
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    Map.empty
}

class NeedsArgGrouper(n: Int) extends SystemStreamPartitionGrouper {
  override def group(previous: Map[SSP, TaskName], ssps: Set[SSP]): Map[TaskName, Set[SSP]] =
    Map.empty
}

abstract class AbstractGrouper extends SystemStreamPartitionGrouper

class NotAGrouper

/** Sends every new partition to partition 0's task, and accepts any growth. */
class ToFirstPartition extends PartitionExpansionAlgorithm {
  override def originPartition(
      stream: String,
      partition: Int,
      initialCount: Int,
      newCount: Int
  ): Int = 0
}

class OutOfRangeExpansion extends PartitionExpansionAlgorithm {
  override def originPartition(
      stream: String,
      partition: Int,
      initialCount: Int,
      newCount: Int
  ): Int = partition
}
