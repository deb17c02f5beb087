package streamctl.spark

import org.apache.kafka.clients.producer.{Callback, ProducerRecord, RecordMetadata}
import org.apache.kafka.common.utils.Utils
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory

import streamctl.StreamctlException
import streamctl.control.IntermediateMessage
import streamctl.system.{KafkaParams, ProducerPool}

final case class IntermediateWriterFactory(kafka: KafkaParams, stream: String, partitions: Int, layout: RowLayout)
  extends DataWriterFactory with StreamingDataWriterFactory {

  override def createWriter(writerPartition: Int, attemptId: Long): DataWriter[InternalRow] = new IntermediateDataWriter(this)

  override def createWriter(writerPartition: Int, attemptId: Long, epochId: Long): DataWriter[InternalRow] = new IntermediateDataWriter(this)
}

/** How many records one writer partition wrote: the query's control hears whether a batch wrote any. */
final case class IntermediateCommitMessage(records: Long)
  extends WriterCommitMessage

/**
 * Sends framed records asynchronously and makes `commit` the point of truth: it flushes
 * and fails the task if any send failed, so Spark never commits a batch whose records did
 * not reach Kafka.
 */
final class IntermediateDataWriter(f: IntermediateWriterFactory) extends DataWriter[InternalRow] {
  private val producer = ProducerPool.acquire(f.kafka)
  @volatile private var failure: Exception = _
  private var records = 0L
  private val callback: Callback = (_: RecordMetadata, e: Exception) => if (e != null && failure == null) failure = e

  override def write(row: InternalRow): Unit = {
    if (failure != null) throw sendFailed()
    val l = f.layout
    val key: Array[Byte] =
      if (l.key < 0 || row.isNullAt(l.key)) null
      else if (l.keyIsString) row.getUTF8String(l.key).getBytes else row.getBinary(l.key)
    val payload: Array[Byte] =
      if (row.isNullAt(l.value)) Array.emptyByteArray
      else if (l.valueIsString) row.getUTF8String(l.value).getBytes else row.getBinary(l.value)
    val partition = choosePartition(row, key)
    val framed = IntermediateMessage.frameUser(payload)
    records += 1
    producer.send(new ProducerRecord[Array[Byte], Array[Byte]](f.stream, if (partition >= 0) Integer.valueOf(partition) else null, key, framed), callback)
  }

  // Keyed records go to murmur2(key) mod partitions, as Kafka's default partitioner does,
  // but computed here so that the partition is known for bookkeeping and stays stable.
  private def choosePartition(row: InternalRow, key: Array[Byte]): Int = {
    val l = f.layout
    if (l.partition >= 0 && !row.isNullAt(l.partition)) {
      val p = row.getInt(l.partition)
      if (p < 0 || p >= f.partitions)
        throw StreamctlException(s"Column 'partition' is $p but stream '${f.stream}' has partitions 0..${f.partitions - 1}")
      p
    } else if (key != null) Utils.toPositive(Utils.murmur2(key)) % f.partitions
    else -1
  }

  override def commit(): WriterCommitMessage = {
    producer.flush()
    if (failure != null) throw sendFailed()
    IntermediateCommitMessage(records)
  }

  override def abort(): Unit = ()

  override def close(): Unit = ProducerPool.release(f.kafka, producer, failed = failure != null)

  private def sendFailed(): StreamctlException = f.kafka.sendFailed(s"writing to stream '${f.stream}'", failure)
}
