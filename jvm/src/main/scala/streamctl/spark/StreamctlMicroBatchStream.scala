package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._
import org.slf4j.LoggerFactory

import streamctl.{Json, StreamctlException}
import streamctl.metadata.{FileSystemMetadataStore, MetadataStore, StoreLayout}
import streamctl.plan.{ReaderConfig, SourceOptions}
import streamctl.system.{KafkaSystemAdmin, SSP, SspRange, StreamCheck, StreamDescription}

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
  private val storePath = StoreLayout.ofSource(options.metadataStorePath, sourceCheckpoint)
  private lazy val store: MetadataStore = new FileSystemMetadataStore(storePath, hadoopConf)
  private val keys = StoreLayout.Source(StoreLayout.sourceId(sourceCheckpoint))
  private val streamCheck = new StreamCheck(admin, options.streams, options.grouping.checkIntervalMs)
  private val dataLoss = new DataLossStep(admin, options.failOnDataLoss)
  private val grouping = new GroupingStep(options.grouping, admin, store, keys.mappingKey)
  private val startpoints = new StartpointStep(() => store, admin, options.streams, storePath)
  // Built here so that a bad chooser option or class fails the query at its start.
  private val admission = new AdmissionStep(options.chooser, admin)
  private val locality = LocalityStep.start(SparkSession.active.sparkContext, options.hostAffinity,
    () => store, keys.localityKey)
  private val control = new ControlStep(options, keys.controlNamespace, storePath, store, hadoopConf)

  @volatile private var availableNowTarget: Option[Map[SSP, Long]] = None
  @volatile private var lastHeads: Map[SSP, Long] = Map.empty

  override def initialOffset(): Offset = InitialOffset(sourceCheckpoint, hadoopConf).getOrCreate {
    // Not counted as the planner's check: the first planning of every run asks again (see latestOffset).
    val described = streamCheck.describe()
    val mapping = grouping.initial(described)
    val start = options.startingOffsets match {
      case "earliest" => admin.oldestOffsets(mapping.ssps)
      case _ => admin.upcomingOffsets(mapping.ssps)
    }
    control.initialize(dataLoss.initialize(grouping.initialOffset(mapping, start), described))
  }

  override def getDefaultReadLimit: ReadLimit =
    options.maxRecordsPerBatch.map(n => ReadLimit.maxRows(n)).getOrElse(ReadLimit.allAvailable())

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException("streamctl plans batches with latestOffset(start, limit)")

  /**
   * Plans the batch that begins at `start` (the previous batch's end, already in the
   * offset log). The steps, in this order, each adjust the plan:
   *  1. recreated streams ([[DataLossStep.recreations]]), when Kafka was asked about the
   *     streams ([[StreamCheck]]): fail, or read a recreated topic again from its start;
   *  2. grouping ([[GroupingStep]]): partition expansion adds SSPs to tasks, beginning at their first
   *     offset and held until their task's older partitions passed the growth;
   *  3. startpoints: at the first planning after a (re)start, move where SSPs begin;
   *  4. retention gaps ([[DataLossStep.gaps]]): with `fail.on.data.loss=false`, skip records gone from the broker;
   *  5. control: bring in the control bookkeeping the readers recorded for `start`'s batch;
   *  6. admission: share the record budget by the chooser policy and decide where each SSP
   *     ends ([[AdmissionStep]]).
   * Beginnings that differ from `start`'s positions go into the end offset's `starts`.
   */
  override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
    val previous = asSourceOffset(start)
    if (control.holdsBack(previous)) return previous
    // Always Some at the first planning of a run, so a run's one-shot steps (startpoints) never
    // see the planning repeated below.
    val described = streamCheck.ifDue()
    val (plan, heads) = planned(previous, described) match {
      // A partition that ends before our position lost records we counted on: ask Kafka about
      // the streams now, so a recreated topic is told from a truncated one in this batch.
      case (p, h) if described.isEmpty && behind(p, h).nonEmpty => planned(previous, Some(streamCheck.now()))
      case done => done
    }
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
    if (next.json == previous.json) previous
    else {
      dataLoss.planned(next)
      next
    }
  }

  private def planned(previous: SourceOffset, described: Option[Map[String, StreamDescription]]): (BatchPlan, Map[SSP, Long]) = {
    val recreated = dataLoss.recreations(BatchPlan(previous), described, locality.runs.skipped)
    val plan = dataLoss.gaps(startpoints(grouping.plan(recreated, described, availableNowTarget)))
    (plan, admin.upcomingOffsets(plan.ssps))
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
    if (!consumed.isPresent) return locality.metrics.asJava
    val loss = dataLoss.metrics(consumed.get, locality.runs.skipped)
    if (lastHeads.isEmpty) return (locality.metrics ++ loss).asJava
    val behind = consumed.get.minPositions.map { case (ssp, o) => ssp -> math.max(0L, lastHeads.getOrElse(ssp, o) - o) }
    val perSsp = Json.obj()
    behind.toSeq.sortBy(_._1).foreach { case (ssp, b) => perSsp.put(ssp.toString, b) }
    (Map(
      "minOffsetsBehindLatest" -> behind.values.min.toString,
      "maxOffsetsBehindLatest" -> behind.values.max.toString,
      "avgOffsetsBehindLatest" -> (behind.values.sum.toDouble / behind.size).toString,
      "recordsBehindHead" -> Json.write(perSsp)) ++ loss ++ locality.metrics ++ control.metrics(consumed.get)).asJava
  }

  override def stop(): Unit = {
    locality.stop()
    control.stopped()
    admin.close()
    store.close()
  }

  override def toString: String = s"streamctl[${options.streams.mkString(",")}]"

  private def currentSsps(): Set[SSP] =
    streamCheck.describe().toSeq.flatMap { case (s, d) => (0 until d.partitions).map(p => SSP.kafka(s, p)) }.toSet

  /** SSPs whose head is behind a task's position in `plan`, with the furthest such position. */
  private def behind(plan: BatchPlan, heads: Map[SSP, Long]): Map[SSP, Long] =
    plan.begins.values.flatten.groupMapReduce(_._1)(_._2)(math.max).filter { case (s, o) => heads.get(s).exists(_ < o) }

  /**
   * A head behind our position, in a topic that was not recreated (that is told by its topic
   * ID, before this), means the partition was truncated (e.g. an unclean leader election):
   * records we counted on are gone, and the offsets we read will be reused.
   */
  private def checkNotBehind(plan: BatchPlan, heads: Map[SSP, Long]): Unit = {
    val found = behind(plan, heads)
    if (found.nonEmpty) {
      val what = found.toSeq.sortBy(_._1).map { case (s, o) =>
        s"stream '${s.stream}' partition ${s.partition}: checkpoint at offset $o, broker ends at ${heads(s)}"
      }.mkString("; ")
      if (options.failOnDataLoss)
        throw StreamctlException(s"Kafka holds fewer records than the checkpoint has read ($what); the topic was truncated " +
          "(or recreated before streamctl recorded topic IDs). Set option 'fail.on.data.loss' to false to continue from the broker's end")
      StreamctlMicroBatchStream.log.warn(s"Kafka holds fewer records than the checkpoint has read ($what); continuing from the " +
        "broker's end, because option 'fail.on.data.loss' is false")
    }
  }

  private def asSourceOffset(o: Offset): SourceOffset = o match {
    case s: SourceOffset => s
    case other => SourceOffset.parse(other.json())
  }
}

object StreamctlMicroBatchStream {
  private val log = LoggerFactory.getLogger(classOf[StreamctlMicroBatchStream])
}
