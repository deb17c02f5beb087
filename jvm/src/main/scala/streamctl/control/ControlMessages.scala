package streamctl.control

import streamctl.grouper.TaskName

/**
 * The control messages one producer task of a query sends. Every partition of every
 * intermediate stream the query writes gets the same bytes, sent after the data they
 * speak for (in-band ordering), so a reader of any partition hears from every producer;
 * when and where each goes is [[ProducerControl]]'s.
 *
 * `taskCount` must be the number of producers that will each send their own messages
 * to every partition; how a query names its producers is the sink's choice. Two
 * workable choices: one producer per query (count 1, messages sent by the driver after
 * the batch's writers have committed), or one per fixed writer partition.
 *
 * {{{
 * val control = ControlMessages.forProducer("Partition 2", taskCount = 4)
 * send(topic, partition, control.watermark(eventTimeWatermark))
 * send(topic, partition, control.idle(Some(eventTimeWatermark)))
 * send(topic, partition, control.endOfStream)
 * }}}
 */
final class ControlMessages private (val taskName: String, val taskCount: Int) {
  IntermediateMessage.checkProducer(taskName, taskCount)

  def watermark(timestamp: Long): Array[Byte] = IntermediateMessage.watermark(taskName, taskCount, timestamp)

  /** A fresh array each call: callers hand it to a producer and must not share a mutable buffer. */
  def endOfStream: Array[Byte] = IntermediateMessage.endOfStream(taskName, taskCount)

  /** "Nothing to write for now", with the producer's watermark when it has one. */
  def idle(watermark: Option[Long]): Array[Byte] = IntermediateMessage.idle(taskName, taskCount, watermark)

  /** "Writing again": sent to every partition before the producer's first data after [[idle]]. */
  def active(watermark: Option[Long]): Array[Byte] = IntermediateMessage.active(taskName, taskCount, watermark)

  override def toString: String = s"ControlMessages(producer '$taskName' of $taskCount)"
}

object ControlMessages {
  def forProducer(taskName: String, taskCount: Int): ControlMessages = new ControlMessages(taskName, taskCount)

  def forProducer(task: TaskName, taskCount: Int): ControlMessages = forProducer(task.name, taskCount)
}
