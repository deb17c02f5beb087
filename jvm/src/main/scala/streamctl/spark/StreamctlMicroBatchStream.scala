package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._

import streamctl.{Json, StreamctlException}
import streamctl.grouper.{GroupByPartition, TaskName}
import streamctl.metadata.{FileSystemMetadataStore, MetadataStore}
import streamctl.system.{KafkaSystemAdmin, SSP, SspRange}

/**
 * Plans micro-batches from broker offsets. The driver never sees record contents: it
 * decides per SSP where each batch ends (admission control), which task reads what, and
 * hands the executors exact offset ranges. Everything a replay needs is in the offsets
 * Spark logs ([[SourceOffset]]).
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

  @volatile private var availableNowTarget: Option[Map[SSP, Long]] = None
  @volatile private var lastHeads: Map[SSP, Long] = Map.empty

  override def initialOffset(): Offset = {
    val ssps = currentSsps()
    val tasks = new GroupByPartition().group(Map.empty, ssps)
    store.put("grouper", mappingKey, mappingJson(tasks))
    val positions = options.startingOffsets match {
      case "earliest" => admin.oldestOffsets(ssps)
      case _ => admin.upcomingOffsets(ssps)
    }
    SourceOffset(positions, tasks)
  }

  override def getDefaultReadLimit: ReadLimit =
    options.maxRecordsPerBatch.map(n => ReadLimit.maxRows(n)).getOrElse(ReadLimit.allAvailable())

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException("streamctl plans batches with latestOffset(start, limit)")

  override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
    val from = asSourceOffset(start)
    val heads = admin.upcomingOffsets(from.positions.keySet)
    lastHeads = heads
    checkNotBehind(from.positions, heads)
    val reachable = heads.map { case (s, h) =>
      val pos = from.positions(s)
      // Only reached with fail.on.data.loss=false: continue from the broker's end.
      if (h < pos) s -> h
      else s -> math.max(pos, availableNowTarget.flatMap(_.get(s)).fold(h)(math.min(h, _)))
    }
    val ends = limit match {
      case m: ReadMaxRows => FairShare.admit(from.positions, reachable, m.maxRows())
      case _ => reachable
    }
    if (ends == from.positions) from else from.withPositions(ends)
  }

  override def reportLatestOffset(): Offset =
    if (lastHeads.isEmpty) null else SourceOffset(lastHeads, Map.empty)

  override def prepareForTriggerAvailableNow(): Unit =
    availableNowTarget = Some(admin.upcomingOffsets(currentSsps()))

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val s = asSourceOffset(start)
    val e = asSourceOffset(end)
    e.tasks.toSeq.sortBy(_._1).flatMap { case (task, ssps) =>
      val ranges = ssps.toSeq.sorted.map { ssp =>
        val until = e.positions(ssp)
        SspRange(ssp, math.min(s.positions.getOrElse(ssp, until), until), until)
      }.filter(_.size > 0)
      if (ranges.isEmpty) None else Some(TaskInputPartition(task.name, ranges, Array.empty[String]))
    }.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = TaskReaderFactory(ReaderConfig(options))

  override def deserializeOffset(json: String): Offset = SourceOffset.parse(json)

  override def commit(end: Offset): Unit = ()

  override def metrics(latestConsumedOffset: java.util.Optional[Offset]): java.util.Map[String, String] = {
    val consumed = latestConsumedOffset.map[SourceOffset](asSourceOffset)
    if (!consumed.isPresent || lastHeads.isEmpty) return java.util.Map.of()
    val behind = consumed.get.positions.map { case (ssp, o) => ssp -> math.max(0L, lastHeads.getOrElse(ssp, o) - o) }
    val perSsp = Json.obj()
    behind.toSeq.sortBy(_._1).foreach { case (ssp, b) => perSsp.put(ssp.toString, b) }
    Map(
      "minOffsetsBehindLatest" -> behind.values.min.toString,
      "maxOffsetsBehindLatest" -> behind.values.max.toString,
      "avgOffsetsBehindLatest" -> (behind.values.sum.toDouble / behind.size).toString,
      "recordsBehindHead" -> Json.write(perSsp)).asJava
  }

  override def stop(): Unit = {
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
  private def checkNotBehind(positions: Map[SSP, Long], heads: Map[SSP, Long]): Unit = {
    val behind = positions.filter { case (s, o) => heads.get(s).exists(_ < o) }
    if (behind.nonEmpty && options.failOnDataLoss) {
      val what = behind.toSeq.sortBy(_._1).map { case (s, o) => s"stream '${s.stream}' partition ${s.partition}: checkpoint at offset $o, broker ends at ${heads(s)}" }
      throw StreamctlException(s"Kafka holds fewer records than the checkpoint has read (${what.mkString("; ")}); the topic was " +
        "truncated or recreated. Set option 'fail.on.data.loss' to false to continue from the broker's end")
    }
  }

  private def mappingJson(tasks: Map[TaskName, Set[SSP]]): String = SourceOffset(Map.empty, tasks).json

  private def asSourceOffset(o: Offset): SourceOffset = o match {
    case s: SourceOffset => s
    case other => SourceOffset.parse(other.json())
  }
}
