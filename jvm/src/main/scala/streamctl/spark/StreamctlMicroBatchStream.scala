package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._

import streamctl.{Json, StreamctlException}
import streamctl.metadata.{MetadataStore, FileSystemMetadataStore}
import streamctl.system.{KafkaSystemAdmin, SSP, SspRange}

/**
 * Plans micro-batches from broker offsets. The driver never sees record contents: it
 * decides per task and SSP where each batch ends (admission control) and hands the
 * executors exact offset ranges. Everything a replay needs is in the offsets Spark logs
 * ([[SourceOffset]]); this class keeps no state a restart would need.
 */
class StreamctlMicroBatchStream(
    options: SourceOptions,
    sourceCheckpoint: String,
    hadoopConf: Configuration)
  extends MicroBatchStream with SupportsTriggerAvailableNow with ReportsSourceMetrics {

  private val admin = KafkaSystemAdmin(options.kafka)
  private val storePath = MetadataLocation.resolve(options.metadataStorePath, sourceCheckpoint)
  private lazy val store: MetadataStore = new FileSystemMetadataStore(storePath, hadoopConf)
  private val mappingKey = s"mapping-${MetadataLocation.sourceId(sourceCheckpoint)}"
  private val grouping = new GroupingStep(options.grouping, options.streams, admin, store, mappingKey)
  private val startpoints = new StartpointStep(() => store, admin, options.streams, storePath)
  // Built here so that a bad chooser option or class fails the query at its start.
  private val admission = new AdmissionStep(ChooserOptions.validated(options), admin)
  private val locality = LocalityStep.start(SparkSession.active.sparkContext, LocalityStep.enabled(options),
    () => store, MetadataLocation.sourceId(sourceCheckpoint))
  private val control = new ControlStep(options, MetadataLocation.sourceId(sourceCheckpoint), storePath, store, hadoopConf)

  @volatile private var availableNowTarget: Option[Map[SSP, Long]] = None
  @volatile private var lastHeads: Map[SSP, Long] = Map.empty

  override def initialOffset(): Offset = InitialOffset(sourceCheckpoint, hadoopConf).getOrCreate {
    val mapping = grouping.initial()
    val start = options.startingOffsets match {
      case "earliest" => admin.oldestOffsets(mapping.ssps)
      case _ => admin.upcomingOffsets(mapping.ssps)
    }
    control.initialize(grouping.initialOffset(mapping, start))
  }

  override def getDefaultReadLimit: ReadLimit =
    options.maxRecordsPerBatch.map(n => ReadLimit.maxRows(n)).getOrElse(ReadLimit.allAvailable())

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException("streamctl plans batches with latestOffset(start, limit)")

  /**
   * Plans the batch that begins at `start` (the previous batch's end, already in the
   * offset log). The steps, in this order, each adjust the plan:
   *  1. grouping ([[GroupingStep]]): partition expansion adds SSPs to tasks, beginning at their first
   *     offset and held until their task's older partitions passed the growth;
   *  2. startpoints: at the first planning after a (re)start, move where SSPs begin;
   *  3. control: bring in the control bookkeeping the readers recorded for `start`'s batch;
   *  4. admission: share the record budget by the chooser policy and decide where each SSP
   *     ends ([[AdmissionStep]]).
   * Beginnings that differ from `start`'s positions go into the end offset's `starts`.
   */
  override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
    val previous = asSourceOffset(start)
    if (control.holdsBack(previous)) return previous
    val plan = startpoints(grouping.plan(BatchPlan(previous), availableNowTarget))
    val heads = admin.upcomingOffsets(plan.ssps)
    lastHeads = heads
    checkNotBehind(plan, heads)
    // What each SSP may be read up to in this batch, before the budget is shared.
    // An SSP missing from the target appeared after the query started: it had nothing to read then.
    val reachable = grouping.admissible(plan,
      heads.map { case (s, h) => s -> availableNowTarget.fold(h)(t => math.min(h, t.getOrElse(s, 0L))) })
    val budget = limit match {
      case m: ReadMaxRows => Some(m.maxRows())
      case _ => None
    }
    val (admitted, budgetEnds) = admission(plan, reachable, budget)
    val next = control.plan(previous, admitted.end { (_, ssp, begin) =>
      val h = heads(ssp)
      // Only reached with fail.on.data.loss=false: continue from the broker's end.
      if (h < begin) h else math.max(begin, budgetEnds(ssp))
    }, availableNowTarget)
    if (next.json == previous.json) previous else next
  }

  override def reportLatestOffset(): Offset = if (lastHeads.isEmpty) null else HeadOffset(lastHeads)

  override def prepareForTriggerAvailableNow(): Unit =
    availableNowTarget = Some(admin.upcomingOffsets(currentSsps()))

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val s = asSourceOffset(start)
    val e = asSourceOffset(end)
    val bootstrapHeads = ChooserState.of(e.state).bootstrapHeads
    val placement = locality.plan(e.json, e.tasks.keys.toSeq)
    control.planned(e)
    e.tasks.toSeq.sortBy(_._1).flatMap { case (task, ends) =>
      val ranges = ends.toSeq.sortBy(_._1).map { case (ssp, until) =>
        val from = e.startOf(s, task, ssp).getOrElse(until)
        SspRange(ssp, math.min(from, until), until)
      }.filter(_.size > 0)
      if (ranges.isEmpty) None
      else Some(TaskInputPartition(task.name, ranges, placement.preferredLocations(task),
        bootstrapHeads.filter(h => ranges.exists(_.ssp == h._1)), control.forTask(e, task)))
    }.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = TaskReaderFactory(ReaderConfig(options), locality.runs)

  override def deserializeOffset(json: String): Offset = SourceOffset.parse(json)

  override def commit(end: Offset): Unit = {
    val committed = asSourceOffset(end)
    startpoints.committed(committed)
    control.committed(committed)
  }

  override def metrics(latestConsumedOffset: java.util.Optional[Offset]): java.util.Map[String, String] = {
    val consumed = latestConsumedOffset.map[SourceOffset](asSourceOffset)
    if (!consumed.isPresent || lastHeads.isEmpty) return locality.metrics.asJava
    val behind = consumed.get.minPositions.map { case (ssp, o) => ssp -> math.max(0L, lastHeads.getOrElse(ssp, o) - o) }
    val perSsp = Json.obj()
    behind.toSeq.sortBy(_._1).foreach { case (ssp, b) => perSsp.put(ssp.toString, b) }
    (Map(
      "minOffsetsBehindLatest" -> behind.values.min.toString,
      "maxOffsetsBehindLatest" -> behind.values.max.toString,
      "avgOffsetsBehindLatest" -> (behind.values.sum.toDouble / behind.size).toString,
      "recordsBehindHead" -> Json.write(perSsp)) ++ locality.metrics ++ control.metrics(consumed.get)).asJava
  }

  override def stop(): Unit = {
    locality.stop()
    control.stopped()
    admin.close()
    store.close()
  }

  override def toString: String = s"streamctl[${options.streams.mkString(",")}]"

  private def currentSsps(): Set[SSP] = {
    val counts = admin.partitionCounts(options.streams.toSet)
    options.streams.foreach { s =>
      if (!counts.contains(s)) throw StreamctlException(s"Stream '$s' does not exist on Kafka at ${options.kafka.bootstrapServers}")
    }
    counts.toSeq.flatMap { case (s, n) => (0 until n).map(p => SSP.kafka(s, p)) }.toSet
  }

  /** A head behind our position means the partition was truncated or recreated: records we counted on are gone. */
  private def checkNotBehind(plan: BatchPlan, heads: Map[SSP, Long]): Unit = {
    val positions = plan.begins.values.flatten.groupMapReduce(_._1)(_._2)(math.max)
    val behind = positions.filter { case (s, o) => heads.get(s).exists(_ < o) }
    if (behind.nonEmpty && options.failOnDataLoss) {
      val what = behind.toSeq.sortBy(_._1).map { case (s, o) =>
        s"stream '${s.stream}' partition ${s.partition}: checkpoint at offset $o, broker ends at ${heads(s)}"
      }
      throw StreamctlException(s"Kafka holds fewer records than the checkpoint has read (${what.mkString("; ")}); the topic was " +
        "truncated or recreated. Set option 'fail.on.data.loss' to false to continue from the broker's end")
    }
  }

  private def asSourceOffset(o: Offset): SourceOffset = o match {
    case s: SourceOffset => s
    case other => SourceOffset.parse(other.json())
  }
}
