package streamctl.startpoint

import streamctl.StreamctlException
import streamctl.system.{SSP, TaskName}

/**
 * Where a startpoint is stored: for an SSP (all tasks reading it) or for one task's view of an SSP.
 *
 * Store key encoding: the SSP key `system/stream/partition`, then for a task-level startpoint `/`
 * and the task name verbatim:
 * {{{
 * StartpointKey(SSP.kafka("orders", 3), None).storeKey                         // "kafka/orders/3"
 * StartpointKey(SSP.kafka("orders", 3), Some(TaskName("Partition 3"))).storeKey // "kafka/orders/3/Partition 3"
 * StartpointKey.parse("kafka/orders/3/a/b")  // task "a/b"
 * }}}
 * It is unambiguous because system and stream never contain `/` (Kafka topic names cannot) and the
 * partition is all digits: the first three `/` end the SSP, everything after the third is the task
 * name, which may hold spaces or `/`. Task names must be non-empty. Each startpoint has exactly one
 * key: the partition is written without leading zeros, and [[StartpointKey.parse]] refuses any
 * other spelling.
 */
final case class StartpointKey(ssp: SSP, task: Option[TaskName]) {
  StartpointKey.validate(ssp, task)

  def storeKey: String = task match {
    case None => ssp.key
    case Some(t) => ssp.key + "/" + t.name
  }

  override def toString: String = task.fold(ssp.toString)(t => s"$ssp for task '$t'")
}

object StartpointKey {
  def apply(ssp: SSP): StartpointKey = StartpointKey(ssp, None)
  def apply(ssp: SSP, task: TaskName): StartpointKey = StartpointKey(ssp, Some(task))

  /**
   * Inverse of [[StartpointKey.storeKey]]; an error naming the key when it is not one. Only the
   * canonical form is one: `kafka/orders/03` names partition 3, but fan-out, `list` and `delete`
   * act on `kafka/orders/3`, so a hand-written `kafka/orders/03` would be applied at every start
   * and never removed.
   */
  def parse(storeKey: String): StartpointKey = {
    val key = named(storeKey)
    if (key.storeKey != storeKey) throw StreamctlException(
      s"Not a canonical startpoint key: '$storeKey' (its canonical form is '${key.storeKey}'; delete it and " +
        "set the startpoint again)"
    )
    key
  }

  /**
   * What `storeKey` names, canonical or not: how the commands show and delete a key [[parse]]
   * refuses, since the user knows it by the stream and partition it names.
   */
  private[startpoint] def named(storeKey: String): StartpointKey = storeKey.split("/", 4) match {
    case Array(system, stream, partition) =>
      StartpointKey(sspOf(system, stream, partition, storeKey), None)
    case Array(system, stream, partition, task) if task.nonEmpty =>
      StartpointKey(sspOf(system, stream, partition, storeKey), Some(TaskName(task)))
    case _ => throw bad(storeKey)
  }

  private def sspOf(system: String, stream: String, partition: String, storeKey: String): SSP =
    SSP.of(system, stream, partition).getOrElse(throw bad(storeKey))

  private def bad(storeKey: String) = StreamctlException(
    s"Not a startpoint key: '$storeKey' (expected system/stream/partition or system/stream/partition/task name)"
  )

  private def validate(ssp: SSP, task: Option[TaskName]): Unit = {
    if (
      ssp.system.isEmpty || ssp.system.contains('/') || ssp.stream.isEmpty || ssp.stream.contains(
        '/'
      )
    )
      throw StreamctlException(
        s"Cannot store a startpoint for system '${ssp.system}', stream '${ssp.stream}': names must be non-empty and free of '/'"
      )
    if (ssp.partition < 0) throw StreamctlException(
      s"Cannot store a startpoint for $ssp: partition ${ssp.partition} is negative"
    )
    task.foreach { t =>
      if (t.name == null || t.name.isEmpty)
        throw StreamctlException(s"Cannot store a startpoint for $ssp: the task name is empty")
    }
  }
}
