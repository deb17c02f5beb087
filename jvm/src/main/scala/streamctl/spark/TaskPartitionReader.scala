package streamctl.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.streaming.PartitionOffset

import streamctl.Closing
import streamctl.chooser.ChooserFactory
import streamctl.control.{
  ControlResults,
  ControlStatePublisher,
  SspControlStates,
  TaskControlReader
}
import streamctl.plan.RecordTimes
import streamctl.planner.{ReaderConfig, TaskRead}
import streamctl.system.{ConsumerPool, Envelope, EnvelopeDecoder, KafkaTaskReader}

/**
 * Reads one task of one batch on an executor, one way: Kafka reader -> control decoding -> chooser
 * -> row. The consumer comes from the executor's [[ConsumerPool]], among those of the same `owner`
 * (the source; preferably one assigned to the task's partitions already), and goes back there after
 * a clean read; after a failure it is closed, since its state is unknown. A batch read
 * (`spark.read`) keeps no control bookkeeping: `controlReports` and `controlResults` are None.
 *
 * Micro-batch mode calls [[next]] until the task's ranges are read. Real-time mode calls
 * [[readWithin]] (Spark's `nextWithTimeout`, through the Spark line's [[RealTimeReader]]) on
 * open-ended ranges until Spark ends the batch, then takes [[getOffset]] as the task's end. In
 * real-time mode a reader of intermediate streams records its control states in the metadata store
 * whenever a control message changed them (the driver's sink sends the upstream watermark on from
 * there, see `control.SourceControl`), after flushing the query's streamctl writers of this Spark
 * task ([[TaskWriters]]), so that a watermark never goes downstream ahead of rows written before
 * it; and once every SSP of the task is at end-of-stream it ends its batch at once (nothing more
 * can come). A micro-batch reader reports its control results to the driver once it read its ranges
 * ([[ControlAccumulator]]), which writes the batch's as one value. With option commitOffsets, a
 * real-time reader also reports how far it read ([[HeartbeatPositions]]).
 */
final class TaskPartitionReader(
    read: TaskRead,
    owner: String,
    config: ReaderConfig,
    reports: ReaderAccumulator,
    controlReports: Option[ControlAccumulator],
    controlResults: Option[() => ControlResults],
    positions: Option[PositionAccumulator]
) extends RealTimeReader {
  ExecutorConsumerPool.configured
  private val lease = ConsumerPool.acquire(config.kafka, owner, read.task, read.ranges.map(_.ssp))
  private val consumer = lease.consumer
  reports.ran(read.task, lease.reused) // where the task ran, for host affinity's metrics
  private var healthy = false
  private val control =
    TaskControlReader(read.task, read.ranges, read.control, config.intermediateStreams)
  private val reader =
    try new KafkaTaskReader(
        read.ranges,
        consumer,
        ChooserFactory.forReader(
          config.chooser,
          read.ranges.filter(_.size > 0).map(r => r.ssp -> r.from).toMap,
          read.bootstrapHeads
        ),
        config.readWait,
        config.failOnDataLoss,
        ssp => control.fold(EnvelopeDecoder.Identity)(_.decoderFor(ssp)),
        reports.skip,
        lease.prefetched,
        read.streamIds
      )
    catch { case e: Throwable => ConsumerPool.closeQuietly(consumer); throw e }
  private val converter = new EnvelopeRowConverter(read.task, config.includeHeaders)
  private var current: InternalRow = _
  /* Real-time mode: the store writes go off this thread, so reading never waits for them. Made at
   * the first publish, so only a real-time reader of control messages has one (its store lists its
   * folder: 4,096 listings a batch at 4,096 partitions if every Spark task made one). */
  private var publisher: Option[ControlStatePublisher] = None
  private var published = 0L
  // Only intermediate SSPs: a plain stream never ends, so such a task never ends its batch early.
  private val endsOnEndOfStream =
    control.isDefined && config.endsBatchAtEndOfStream &&
      read.ranges.forall(r => config.intermediateStreams.contains(r.ssp.stream))
  // Whether every SSP is at end-of-stream; changes only with a control message (publishControl).
  private var ended = endsOnEndOfStream && control.get.atEndOfStream
  private var positionsReportedMs = 0L

  override def next(): Boolean = {
    val e = reader.next()
    if (e == null) {
      for (c <- control; r <- controlReports) c.finish(r.report(c.control.seq, read.task, _))
      healthy = true
      false
    } else {
      emit(e)
      true
    }
  }

  override protected def readWithin(timeoutMs: Long): Status = {
    // Only a failure leaves the consumer in a state unknown to the pool; a batch that Spark
    // ends after any call (record or not) leaves it positioned and reusable for the next.
    healthy = false
    val deadline = System.currentTimeMillis() + timeoutMs
    var e: Envelope = null
    var left = timeoutMs
    // The reader returns early after a control message: record it, and end at end-of-stream.
    /* Reporting positions, the wait is cut in pieces: Spark's timeout is what is left of a batch
     * (minutes), and a quiet stream's position still moves (past transaction markers). */
    val piece = if (positions.isDefined) TaskPartitionReader.PositionReportMs else Long.MaxValue
    while (e == null && left > 0 && !ended) {
      e = reader.nextWithin(math.min(left, piece))
      publishControl()
      reportPositions()
      left = deadline - System.currentTimeMillis()
    }
    val status =
      if (e == null) noRecord
      else {
        emit(e)
        record(e.timestamp)
      }
    healthy = true
    status
  }

  /* Real-time mode with option commitOffsets: once a second at most (a heartbeat takes the last). */
  private def reportPositions(): Unit = positions.foreach { p =>
    val now = System.currentTimeMillis()
    if (now - positionsReportedMs >= TaskPartitionReader.PositionReportMs) {
      p.add(reader.positions)
      positionsReportedMs = now
    }
  }

  override def getOffset: PartitionOffset =
    TaskPartitionOffset(
      read.task,
      reader.positions,
      control.map(c => SspControlStates.write(c.state))
    )

  override def get(): InternalRow = current

  // The Spark UI's per-batch figures of this read (SqlMetrics).
  override def currentMetricsValues(): Array[CustomTaskMetric] =
    SqlMetrics.of(reader, config.intermediateStreams.nonEmpty)

  override def close(): Unit =
    ConsumerPool.finish(
      config.kafka,
      owner,
      read.task,
      consumer,
      healthy,
      reader.unread,
      reader.topicPartitionCounts
    ) {
      // The driver keeps the last reported time per SSP; a failed attempt's report is dropped.
      Closing.all(
        () => reports.read(RecordTimes(reader.newestRecordTimes)),
        () => publisher.foreach(_.close()),
        () => reader.close()
      )
    }

  private def emit(e: Envelope): Unit =
    current = converter.toRow(e, control.fold(-1L)(_.watermarkMs(e.ssp)))

  /** Real-time mode: records the task's control states once control messages changed them. */
  private def publishControl(): Unit = control.foreach { c =>
    if (c.applied != published) {
      published = c.applied
      ended = endsOnEndOfStream && c.atEndOfStream
      // Every row handed to Spark before this call was sent already (the writer runs in this
      // Spark task, row by row); flushing its writers before the store write makes sure those
      // rows reached Kafka before the watermark can go out.
      if (publisher.isEmpty)
        publisher = controlResults.map(r => new ControlStatePublisher(r(), read.task))
      publisher.foreach(_.publish(c.control.seq, c.state, TaskWriters.ofCurrent()))
    }
  }
}

private object TaskPartitionReader {
  // Spark's heartbeat (10 s by default) takes the last report; more often would only cost maps.
  val PositionReportMs = 1000L
}
