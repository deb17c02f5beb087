package streamctl.control

import streamctl.grouper.TaskName

/**
 * The control messages one producer task of a query sends. Every partition of every
 * intermediate stream the query writes gets the same bytes, sent after the data they
 * speak for (in-band ordering), so a reader of any partition hears from every producer.
 *
 * `taskCount` must be the number of producers that will each send their own messages
 * to every partition; how a query names its producers is the sink's choice. Two
 * workable choices: one producer per query (count 1, messages sent by the driver after
 * the batch's writers have committed), or one per fixed writer partition.
 *
 * {{{
 * val control = ControlMessages.forProducer("Partition 2", taskCount = 4)
 * control.watermarkIfAdvanced(lastSent, eventTimeWatermark).foreach { bytes =>
 *   ControlMessages.toEveryPartition(partitionCount, bytes).foreach { case (p, v) => send(topic, p, v) }
 * }
 * ControlMessages.toEveryPartition(partitionCount, control.endOfStream).foreach { case (p, v) => send(topic, p, v) }
 * }}}
 */
final class ControlMessages private (val taskName: String, val taskCount: Int) {
  IntermediateMessage.checkProducer(taskName, taskCount)

  def watermark(timestamp: Long): Array[Byte] = IntermediateMessage.watermark(taskName, taskCount, timestamp)

  /** A fresh array each call: callers hand it to a producer and must not share a mutable buffer. */
  def endOfStream: Array[Byte] = IntermediateMessage.endOfStream(taskName, taskCount)

  /** The watermark message to send, or None when it would not advance on `lastSent` (sent only when it advances). */
  def watermarkIfAdvanced(lastSent: Option[Long], timestamp: Long): Option[Array[Byte]] =
    if (lastSent.forall(timestamp > _)) Some(watermark(timestamp)) else None

  override def toString: String = s"ControlMessages(producer '$taskName' of $taskCount)"
}

object ControlMessages {
  def forProducer(taskName: String, taskCount: Int): ControlMessages = new ControlMessages(taskName, taskCount)

  def forProducer(task: TaskName, taskCount: Int): ControlMessages = forProducer(task.name, taskCount)

  /** (partition, value) for partitions 0 until `partitionCount`, sharing one array (Kafka never mutates values). */
  def toEveryPartition(partitionCount: Int, value: Array[Byte]): IndexedSeq[(Int, Array[Byte])] =
    (0 until partitionCount).map(p => p -> value)
}
