package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._
import org.apache.spark.streamctl.SparkQueries
import org.apache.spark.util.SerializableConfiguration

import streamctl.{Closing, StreamctlException}
import streamctl.locality.ExecutorId
import streamctl.metadata.{FileSystemMetadataStore, MetadataStore, StoreLayout}
import streamctl.ops.{ProgressHistory, ProgressRecorder}
import streamctl.plan.SourcePosition
import streamctl.planner.{
  InitialOffset,
  Planner,
  ReaderConfig,
  RealTimeBatch,
  SourceOptions,
  SourceStates,
  TaskRead
}
import streamctl.system.{GroupOffsetCommitter, KafkaSystemAdmin, SSP}

/**
 * Spark's `MicroBatchStream` for a streamctl source: converts Spark's types around the [[Planner]],
 * which plans every batch, and connects it to what only Spark has (executors, the readers'
 * accumulator, the query's control, the Hadoop configuration readers need).
 */
class StreamctlMicroBatchStream(
    options: SourceOptions,
    sourceCheckpoint: String,
    hadoopConf: Configuration
) extends MicroBatchStream with SupportsTriggerAvailableNow with RealTimeStream
    with ReportsSourceMetrics {

  private val sc = SparkSession.active.sparkContext
  private val admin = KafkaSystemAdmin(options.kafka)
  private val storePath = StoreLayout.ofSource(options.metadataStorePath, sourceCheckpoint)
  private lazy val store = new FileSystemMetadataStore(storePath, hadoopConf)
  private val keys = StoreLayout.Source(StoreLayout.sourceId(sourceCheckpoint))
  private val executors = if (options.hostAffinity) Some(ExecutorRegistry.start(sc)) else None
  private val reports = ReaderAccumulator.register(sc)
  // Readers record their control results in the store, with the driver's Hadoop settings.
  private lazy val readerConf = sc.broadcast(new SerializableConfiguration(hadoopConf))
  // The same for every batch: it reaches each executor once (TaskReaderFactory says why).
  private lazy val boundedReads = sc.broadcast(ReaderConfig(options, realTime = false))
  private lazy val realTimeReads = sc.broadcast(ReaderConfig(options, realTime = true))
  private val control = QueryControlRegistry.current()
  private val planner = new Planner(
    options,
    admin,
    store,
    storePath,
    keys,
    new InitialOffset(() => new FileSystemMetadataStore(sourceCheckpoint, hadoopConf)),
    () => executors.fold(Seq.empty[ExecutorId])(_.live),
    reports,
    control.map(_.run),
    // The one broker request it costs serves the metrics system's gauge.
    secondsBehind = QueryMetrics.enabled,
    processedBefore = () => lastRecordTimes(),
    // Asked on the query's thread, at the first planning (the query is registered by then).
    logsInBackground = () => engineLogsInBackground()
  )
  // Only a source with intermediate streams has control results: each task attempt carries the
  // accumulator there and back, so a plain source ships none.
  private val controlReports =
    if (options.intermediateStreams.isEmpty) None
    else Some(ControlAccumulator.register(sc, planner.controlResults))
  // Option commitOffsets: the batch's positions go to the group once it committed (its progress
  // report comes after its commit), for monitoring only. Spark tells a source of a commit only when
  // it plans the next batch, so the last batch of a run would never be committed there. A query
  // that logs in the background is the exception (groupFromSparkCommits).
  private val groupOffsets =
    options.commitOffsetsTo.map(new GroupOffsetCommitter(
      options.kafka,
      _,
      s"the query reading ${options.describe}"
    ))
  /* The listener hands each batch's summary here, possibly after this source stopped: the recorder
   * opens a store of its own for it. */
  private val progress = new ProgressRecorder(
    toString,
    () => MetadataStore.open(storePath, hadoopConf),
    keys,
    positions => if (!groupFromSparkCommits) groupOffsets.foreach(_.committed(positions))
  )
  /* Option commitOffsets on a query that logs in the background (Spark's asynchronous progress
   * tracking): its progress report comes before the batch is logged, and most batches are never
   * written to the checkpoint, so a restart resumes before them. Spark commits a source there
   * (commit(end)) once a later batch is in the checkpoint's offset log: where a restart resumes.
   * Read on the query's thread at its first planning, before any report. */
  @volatile private var groupFromSparkCommits = false
  private var engineRead = false

  private def readEngineOnce(): Unit = if (!engineRead) {
    engineRead = true
    if (groupOffsets.isDefined)
      groupFromSparkCommits = engineLogsInBackground().contains(true)
  }

  // Whether the query whose thread asks writes its logs in the background (None: not readable).
  private def engineLogsInBackground(): Option[Boolean] =
    QueryLookup.current.flatMap(SparkQueries.logsInBackground)
  control.foreach(_.addProgressRecorder(toString, progress.record))

  /* Real-time mode with commitOffsets: the readers' positions between batch ends, from Spark's
   * executor heartbeats. Started with the first real-time reader factory, stopped with the source. */
  private var heartbeatPositions: Option[HeartbeatPositions] = None
  /* Left out of what heartbeats commit: a broadcast SSP's readers each stand elsewhere, and only a
   * batch end (the lowest of them) says where the query is. */
  @volatile private var readBySeveral = Set.empty[SSP]

  @volatile private var realTime = false
  /* Real-time mode: the batch planned from its start (Spark plans the partitions more than once per
   * batch). */
  private var realTimeBatch: Option[RealTimeBatch] = None

  private val recentOffsets = new RecentOffsets(SourceStates.parse)

  /* Spark asks only a query without an offset log (at each planning until its first batch): a
   * history left in the store then is another checkpoint's. */
  private var historyCleared = false
  override def initialOffset(): Offset = {
    val first = planner.initialPosition()
    if (!historyCleared) {
      new ProgressHistory(store, keys).clear()
      historyCleared = true
    }
    recentOffsets.made(first)
  }

  /* What the earlier run processed, as its progress history kept it: seconds behind is then known
   * from a restart's first batch. Only that figure depends on it, so an unreadable history leaves
   * it unknown until the readers report. */
  private def lastRecordTimes(): Map[SSP, Long] =
    try new ProgressHistory(store, keys).lastRecordTimes()
    catch {
      case e: StreamctlException =>
        StreamctlMicroBatchStream.log.warn(
          s"Seconds behind unknown until a record is read: ${e.getMessage}"
        )
        Map.empty
    }

  /* Spark's own source's shapes, so that a limit of ReadAllAvailable in latestOffset means what it
   * means there: Trigger.Once, which waits for no minimum. */
  override def getDefaultReadLimit: ReadLimit = {
    val min = options.minRecordsPerBatch.map(n => ReadLimit.minRows(n, options.maxTriggerDelayMs))
    val max = options.maxRecordsPerBatch.map(n => ReadLimit.maxRows(n))
    (min ++ max).toSeq match {
      case Seq() => ReadLimit.allAvailable()
      case Seq(one) => one
      case both => ReadLimit.compositeLimit(both.toArray)
    }
  }

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException(
      "streamctl plans batches with latestOffset(start, limit)"
    )

  override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
    /* Real-time mode ignores the answer: a batch always runs, planned in
     * planInputPartitions(start). */
    readEngineOnce()
    if (realTime) return start
    val previous = position(start)
    val limits = limit match {
      case c: CompositeReadLimit => c.getReadLimits.toSeq
      case one => Seq(one)
    }
    val allAvailable = limits.exists(_.isInstanceOf[ReadAllAvailable])
    val budget =
      if (allAvailable) None else limits.collectFirst { case m: ReadMaxRows => m.maxRows() }
    val next = planner.latestOffset(previous, budget, allAvailable)
    if (next eq previous) start else recentOffsets.made(next)
  }

  override def reportLatestOffset(): Offset =
    if (planner.reportedHeads.isEmpty) null else HeadOffset(planner.reportedHeads)

  override def prepareForTriggerAvailableNow(): Unit = planner.prepareForTriggerAvailableNow()

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] =
    planner.planReads(position(start), position(end)).map(TaskInputPartition(_)).toArray

  /**
   * `trigger(realTime=...)`: from now on batches are planned open-ended
   * ([[Planner.beginRealTime]]).
   */
  override def prepareForRealTimeMode(): Unit = {
    options.checkRealTime()
    realTime = true
    QueryControlRegistry.current().foreach(_.run.realTimeSource())
  }

  override def planInputPartitions(start: Offset): Array[InputPartition] = synchronized {
    readEngineOnce()
    val from = position(start)
    val batch = realTimeBatch.filter(_.previous == from).getOrElse {
      val b = planner.beginRealTime(from)
      realTimeBatch = Some(b)
      readBySeveral = TaskRead.readBySeveral(b.reads)
      b
    }
    batch.reads.map(TaskInputPartition(_)).toArray
  }

  override def mergeOffsets(offsets: Array[PartitionOffset]): Offset = synchronized {
    val batch = realTimeBatch.getOrElse(
      throw new IllegalStateException("mergeOffsets before planInputPartitions")
    )
    realTimeBatch = None
    val readers = offsets.toSeq.map {
      case t: TaskPartitionOffset => t.task -> t.readerEnd
      case other => throw new IllegalArgumentException(s"Not a streamctl reader's offset: $other")
    }.toMap
    recentOffsets.made(planner.endRealTime(batch, readers))
  }

  override def createReaderFactory(): PartitionReaderFactory =
    TaskReaderFactory(
      if (realTime) realTimeReads else boundedReads,
      reports,
      controlReports,
      storePath,
      keys.controlNamespace,
      readerConf,
      if (realTime) positionsFromHeartbeats() else None
    )

  private def positionsFromHeartbeats(): Option[PositionAccumulator] = synchronized {
    if (heartbeatPositions.isEmpty)
      heartbeatPositions =
        groupOffsets.map(g => HeartbeatPositions.start(sc, p => g.reported(p -- readBySeveral)))
    heartbeatPositions.map(_.accumulator)
  }

  override def deserializeOffset(json: String): Offset =
    try recentOffsets.read(json)
    catch {
      case e: StreamctlException if StreamctlMicroBatchStream.isSparkKafkaOffset(json) =>
        throw StreamctlMicroBatchStream.fromSparkKafkaSource(sourceCheckpoint, json, e)
    }

  override def commit(end: Offset): Unit = {
    val committed = position(end)
    planner.commit(committed)
    if (groupFromSparkCommits) groupOffsets.foreach(_.committed(committed.minPositions))
  }

  override def metrics(latestConsumedOffset: java.util.Optional[Offset])
      : java.util.Map[String, String] =
    planner.metrics(if (latestConsumedOffset.isPresent) Some(position(latestConsumedOffset.get))
    else None).asJava

  override def stop(): Unit = Closing.all(
    () => synchronized(heartbeatPositions.foreach(_.stop())),
    () => planner.stop(),
    () => progress.close(),
    () => groupOffsets.foreach(_.close()),
    () => executors.foreach(_.stop()),
    () => admin.close(),
    () => store.close()
  )

  override def toString: String = StreamctlMicroBatchStream.description(options)

  private def position(o: Offset): SourcePosition = recentOffsets.position(o)
}

object StreamctlMicroBatchStream {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[StreamctlMicroBatchStream])

  /* Spark's Kafka source's offset: topic -> partition -> offset, no version. A job switched from
   * format("kafka") by its format name alone meets it at its first restart. */
  private[spark] def isSparkKafkaOffset(json: String): Boolean =
    scala.util.Try(streamctl.Json.parse(json, "an offset")).toOption.exists { root =>
      root.isObject && !root.has("version") && root.size > 0 &&
      root.properties().asScala.forall { t =>
        t.getValue.isObject && t.getValue.properties().asScala.forall(p =>
          scala.util.Try(p.getKey.toInt).isSuccess && p.getValue.isIntegralNumber
        )
      }
    }

  private[spark] def fromSparkKafkaSource(
      sourceCheckpoint: String,
      json: String,
      cause: Throwable
  ): StreamctlException = {
    // <checkpoint>/sources/<id>
    val checkpoint = new org.apache.hadoop.fs.Path(sourceCheckpoint).getParent.getParent
    StreamctlException(
      s"The checkpoint at $checkpoint was written by Spark's Kafka source " + "(format(\"kafka\")): its offsets " +
        s"($json) are not streamctl's, and streamctl does not continue another source's checkpoint. To move the " +
        "query to streamctl where it stopped, start it with a new checkpointLocation and option startingOffsets " +
        s"set to the offsets of its last committed batch (this source's line of $checkpoint/offsets/<N> for the " +
        s"highest N that $checkpoint/commits has too); state the old checkpoint keeps does not move with it",
      cause
    )
  }

  /** How a streamctl source describes itself in query progress: `streamctl[orders,rates]`. */
  val DescriptionPrefix = "streamctl["

  /**
   * The description of a source with these options, the same from its scan and its stream: the
   * listener finds a source's batch recorders by it.
   */
  def description(options: SourceOptions): String = s"$DescriptionPrefix${options.describe}]"
}
