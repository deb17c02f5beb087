package streamctl.spark

import org.apache.kafka.clients.producer.{Callback, ProducerRecord, RecordMetadata}
import org.apache.kafka.common.errors.InterruptException
import org.apache.kafka.common.header.Header
import org.apache.kafka.common.header.internals.RecordHeader
import org.apache.kafka.common.utils.Utils
import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory
// Spark's unsafe memory offsets (internal): a string value is copied from the row's UTF8String
// straight into the framed array, once (framedValue).
import org.apache.spark.unsafe.Platform

import streamctl.StreamctlException
import streamctl.control.IntermediateMessage
import streamctl.system.{
  KafkaParams,
  KafkaSystemAdmin,
  ProducerPool,
  SystemAdmin,
  TransactionalIds,
  TransactionalProducers
}

/**
 * Makes the sink's writers on executors. `topic`: option `topic` (else each row's `topic` column),
 * `topicOption` its name as the user wrote it; `partitions`: the intermediate stream's partition
 * count (0 for a plain sink); `transactions`: the transactional ids of a `transactional=true` sink.
 */
final case class SinkWriterFactory(
    kafka: KafkaParams,
    topic: Option[String],
    topicOption: String,
    intermediate: Boolean,
    partitions: Int,
    layout: RowLayout,
    transactions: Option[TransactionalIds] = None
) extends DataWriterFactory with StreamingDataWriterFactory {

  // A batch write is one "batch" of its own transactional ids.
  override def createWriter(writerPartition: Int, attemptId: Long): DataWriter[InternalRow] =
    new SinkDataWriter(this, writerPartition, 0L)

  override def createWriter(
      writerPartition: Int,
      attemptId: Long,
      epochId: Long
  ): DataWriter[InternalRow] =
    new SinkDataWriter(this, writerPartition, epochId)
}

/**
 * How many records one writer partition wrote (or, re-running a batch a transactional sink had
 * committed, found written): the query's control hears whether a batch wrote any. `writer`: the
 * transactional producer that committed them ([[TransactionalProducers.Lease.writer]]).
 */
final case class SinkCommitMessage(records: Long, writer: Option[Long] = None)
    extends WriterCommitMessage

/**
 * Sends records asynchronously and makes `commit` the point of truth: it flushes and fails the
 * Spark task attempt if any send failed, so Spark never commits a batch whose records did not reach
 * Kafka.
 *
 * A plain record is what `format("kafka")` writes: the value bytes as given (a null value is a
 * tombstone), the key, the headers, the row's topic and partition (else the producer's partitioner
 * decides). An intermediate stream's value is framed ([[IntermediateMessage]]) and a keyed record's
 * partition is computed here (murmur2, as Kafka's default partitioner), so that it is known and
 * stable.
 *
 * A transactional sink writes writer partition `writerPartition`'s records of batch `batch` in one
 * Kafka transaction, committed by `commit` ([[TransactionalProducers]]); when an earlier attempt
 * already committed them, this one reads its rows and writes nothing.
 */
final class SinkDataWriter(f: SinkWriterFactory, writerPartition: Int, batch: Long)
    extends DataWriter[InternalRow]
    with WriteAll {
  private val transaction =
    f.transactions.map(ids =>
      TransactionalProducers.acquire(
        f.kafka,
        ids.of(writerPartition),
        ids.lastWriters.get(writerPartition)
      )
    )
  private val producer = transaction.fold(ProducerPool.acquire(f.kafka))(_.producer)
  /* This batch's records of this writer partition are in Kafka already, from an attempt that
   * committed them. Only the batch Spark logged last is ever run again: a later one committed means
   * the checkpoint went back (restored from a copy, offsets deleted), and its batches, planned
   * anew, would be skipped for the old ones' output. */
  private val written = transaction.exists { t =>
    if (t.committedBatch > batch) {
      TransactionalProducers.release(t, failed = true) // the writer ends here, not in close()
      throw StreamctlException(
        s"Transactional id '${t.transactionalId}' committed batch ${t.committedBatch} of this query, which is now " +
          s"writing batch $batch: its checkpoint is older than its output (restored from a copy, or batches " +
          "deleted from its offsets and commits). Writing would skip or repeat records: start it with a new " +
          "checkpoint, or a new option 'transactionalIdPrefix' to write these batches again"
      )
    }
    t.committedBatch == batch
  }
  @volatile private var failure: Exception = _
  // Where the first failed send went, as Kafka reports it (its partition is -1 when the record
  // failed before one was chosen): the error names the partition when it is known.
  @volatile private var failedAt: RecordMetadata = _
  private var records = 0L
  private val callback: Callback = (m: RecordMetadata, e: Exception) =>
    if (e != null && failure == null) { failedAt = m; failure = e }
  private val l = f.layout
  // A real-time reader of this Spark task flushes an intermediate writer before it lets a
  // watermark go downstream; a plain stream carries no watermark, so nothing waits on it.
  private val flushForReader: () => Unit = () => {
    producer.flush()
    if (failure != null) throw sendFailed()
  }
  private val attempt = if (f.intermediate) TaskWriters.add(flushForReader) else None

  // Set when the Spark task attempt was killed (the query stopped) while it wrote: it then ends
  // without a commit.
  private var killed = false
  // Set once commit flushed every record: only then has the producer nothing left to send.
  private var flushed = false

  /**
   * A query stopped while its Spark task attempts run (always so in real-time mode, where an
   * attempt reads and writes for the whole batch) kills them by interrupting their threads, and the
   * Kafka client blocked there, the source's poll in the same attempt or this writer's send,
   * throws. That is the stop, not a failure: Spark logs any exception leaving here as an ERROR
   * ("Aborting task"), so the writer ends quietly instead. Spark never delivers the result of a
   * killed attempt (it checks the kill after the attempt returns), so nothing is committed: the
   * batch runs again after a restart.
   */
  override protected def writingAll(rows: => Unit): Unit =
    try rows
    catch { case _: InterruptException | _: InterruptedException if attemptKilled => killed = true }

  private def attemptKilled: Boolean = Option(TaskContext.get()).exists(_.isInterrupted())

  override def write(row: InternalRow): Unit = {
    if (written) { records += 1; return }
    if (failure != null) throw sendFailed()
    val key: Array[Byte] =
      if (l.key < 0 || row.isNullAt(l.key)) null
      else if (l.keyIsString) row.getUTF8String(l.key).getBytes else row.getBinary(l.key)
    val topic = f.topic.getOrElse {
      if (row.isNullAt(l.topic)) throw StreamctlException(
        "A row has a null 'topic' column: give every row a topic, or set option 'topic' for all of them"
      )
      row.getUTF8String(l.topic).toString
    }
    records += 1
    val record =
      if (f.intermediate) {
        val partition = intermediatePartition(row, key)
        new ProducerRecord[Array[Byte], Array[Byte]](
          topic,
          if (partition >= 0) Integer.valueOf(partition) else null,
          key,
          framedValue(row),
          headers(row)
        )
      } else {
        val partition = if (l.partition < 0 || row.isNullAt(l.partition)) null
        else Integer.valueOf(row.getInt(l.partition))
        val value = if (row.isNullAt(l.value)) null
        else if (l.valueIsString) row.getUTF8String(l.value).getBytes else row.getBinary(l.value)
        new ProducerRecord[Array[Byte], Array[Byte]](topic, partition, key, value, headers(row))
      }
    transaction.foreach { t =>
      if (!t.inTransaction) t.begin(batch, topic)
    }
    try producer.send(record, callback)
    catch {
      // A transactional producer refuses every send once its marker failed: name that failure.
      case e: org.apache.kafka.common.KafkaException
          if transaction.isDefined && !e.isInstanceOf[InterruptException] =>
        throw transaction.flatMap(_.markerError).getOrElse(e)
    }
  }

  // A string value is copied once, from the row straight into the frame (not into an array and
  // then again into the frame); a null value is an empty payload.
  private def framedValue(row: InternalRow): Array[Byte] =
    if (row.isNullAt(l.value)) IntermediateMessage.userFrame(0)
    else if (l.valueIsString) {
      val s = row.getUTF8String(l.value)
      val out = IntermediateMessage.userFrame(s.numBytes)
      s.writeToMemory(out, Platform.BYTE_ARRAY_OFFSET + IntermediateMessage.PayloadOffset)
      out
    } else IntermediateMessage.frameUser(row.getBinary(l.value))

  private def headers(row: InternalRow): java.lang.Iterable[Header] =
    if (l.headers < 0 || row.isNullAt(l.headers)) null
    else {
      val array = row.getArray(l.headers)
      val out = new java.util.ArrayList[Header](array.numElements())
      var i = 0
      while (i < array.numElements()) {
        val h = array.getStruct(i, 2)
        out.add(new RecordHeader(
          h.getUTF8String(0).toString,
          if (h.isNullAt(1)) null else h.getBinary(1)
        ))
        i += 1
      }
      out
    }

  private def intermediatePartition(row: InternalRow, key: Array[Byte]): Int =
    if (l.partition >= 0 && !row.isNullAt(l.partition)) {
      val p = row.getInt(l.partition)
      if (!SystemAdmin.exists(p, f.partitions))
        throw SystemAdmin.noSuchPartition(
          f.topic.getOrElse(""),
          p,
          Some(f.partitions),
          "column 'partition' of a row"
        )
      p
    } else if (key != null) Utils.toPositive(Utils.murmur2(key)) % f.partitions
    else -1

  override def commit(): WriterCommitMessage = {
    /* Killed (see writeAll): a flush on the interrupted thread would only throw; Spark drops this
     * answer. */
    if (killed) return SinkCommitMessage(0)
    producer.flush()
    if (failure != null) throw sendFailed()
    transaction.foreach(_.commit(batch))
    flushed = true
    SinkCommitMessage(records, transaction.map(_.writer))
  }

  override def abort(): Unit = transaction.foreach(_.abortQuietly())

  override def currentMetricsValues(): Array[CustomTaskMetric] = SqlMetrics.written(records)

  override def close(): Unit = {
    attempt.foreach(TaskWriters.remove(_, flushForReader))
    // A transaction still open here (a killed or failed attempt) is aborted with its producer.
    transaction match {
      case Some(t) => TransactionalProducers.release(
          t,
          failed = failure != null,
          keep = f.transactions.exists(_.lasting)
        )
      /* An attempt that did not commit (aborted, killed) may leave records in the producer that
       * would still go out later, after the retry's and perhaps after the control messages the
       * driver sends once it commits: its producer is closed, dropping them. */
      case None => ProducerPool.release(f.kafka, producer, failed = failure != null || !flushed)
    }
  }

  private def fencedSend: Boolean = failure match {
    case _: org.apache.kafka.common.errors.ProducerFencedException | _: org.apache.kafka.common.errors.InvalidProducerEpochException =>
      true
    case _ => false
  }

  private def sendFailed(): StreamctlException = {
    val at = Option(failedAt)
    val topic = f.topic.orElse(at.flatMap(m => Option(m.topic)))
    val stream = topic.fold("Kafka")(t => s"stream '$t'")
    val partition = at.filter(_.partition >= 0).fold("")(m => s" partition ${m.partition}")
    // The producer waited max.block.ms for a topic that is not there and says only "not present
    // in metadata": the broker, asked once, says whether it exists.
    val missing = (failure, topic) match {
      case (t: org.apache.kafka.common.errors.TimeoutException, Some(name))
          if String.valueOf(t.getMessage).contains("not present in metadata") =>
        KafkaSystemAdmin.missingAfterTimeout(
          f.kafka,
          name,
          if (f.topic.isDefined) s"option '${f.topicOption}' of the sink"
          else "column 'topic' of a row",
          t
        )
      case _ => None
    }
    // Records fail after the transaction's marker did, because it did.
    lazy val marker = transaction.flatMap(_.markerError).collect { case e: StreamctlException => e }
    missing.orElse(transaction.collect {
      case t if fencedSend => t.fenced(s"writing to $stream$partition", failure)
    }).orElse(marker)
      .getOrElse(f.kafka.sendFailed(s"writing to $stream$partition", failure))
  }
}
