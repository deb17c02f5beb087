package streamctl.spark

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.types._
import org.apache.spark.streamctl.SparkExecutors

import streamctl.StreamctlException
import streamctl.locality.LocalityListing
import streamctl.metadata.{MetadataStore, StoreLayout}
import streamctl.ops.TaskListing
import streamctl.startpoint.{Startpoint, StartpointCommands, StartpointEntry}
import streamctl.system.{KafkaParams, KafkaSystemAdmin, TaskName}

/**
 * The procedures of [[StreamctlCatalog]], `CALL streamctl.system.<name>(...)` with named arguments.
 * A query's metadata store is named by `checkpoint` (its checkpointLocation) or
 * `metadata_store_path` (its `metadata.store.path` option; it wins when both are given, as in the
 * source: [[streamctl.metadata.StoreLayout.locate]]), and reached with the session's Hadoop
 * configuration (so HDFS/S3 credentials set on Spark apply).
 *
 * {{{
 * CALL streamctl.system.set_startpoint(stream => 'orders', type => 'timestamp', timestamp => 1714557600000,
 *                                      checkpoint => '/chk/q1', bootstrap_servers => 'kafka:9092',
 *                                      kafka => map('security.protocol', 'SSL', 'ssl.truststore.location', '/etc/t.p12'))
 * CALL streamctl.system.list_startpoints(checkpoint => '/chk/q1')
 * CALL streamctl.system.delete_startpoints(stream => 'orders', partition => 3, checkpoint => '/chk/q1')
 * CALL streamctl.system.describe_tasks(checkpoint => '/chk/q1')
 * CALL streamctl.system.describe_locality(metadata_store_path => 's3a://bucket/q1-store')
 * CALL streamctl.system.live_executors()
 * CALL streamctl.system.end_of_stream(query_id => '...', run_id => '...')
 * }}}
 */
private[spark] object StreamctlProcedures {
  private val Checkpoint = Param("checkpoint", StringType)
  private val StorePath = Param("metadata_store_path", StringType)
  private val Store = Seq(Checkpoint, StorePath)
  private val Stream = Param("stream", StringType, required = true)
  private val Partition = Param("partition", IntegerType)
  private val Task = Param("task", StringType)
  /* More settings of the Kafka admin client that resolves startpoints (security), as kafka.*
   * options without the prefix. */
  private val Kafka = Param("kafka", MapType(StringType, StringType))

  // A startpoint as Startpoint.Fields gives it, so Python reads fields, never the stored form.
  private val StartpointType = StructType(Seq(
    StructField("type", StringType, nullable = false),
    StructField("offset", LongType),
    StructField("timestamp", LongType),
    StructField("kind", StringType),
    StructField("payload", StringType),
    StructField("creation_time", LongType, nullable = false)
  ))

  private val StartpointRows = StructType(Seq(
    StructField("key", StringType, nullable = false),
    StructField("stream", StringType, nullable = false),
    StructField("partition", IntegerType, nullable = false),
    StructField("task", StringType),
    StructField("startpoint", StartpointType), // null when the stored value is corrupt
    StructField("description", StringType, nullable = false),
    StructField("offset", LongType),
    StructField("end_of_partition", BooleanType)
  ))

  private val setStartpoint = new StreamctlProcedure(
    "set_startpoint",
    "Writes a startpoint for a stream's partition (every partition when none is given: needs bootstrap_servers), " +
      "for every task reading it or one task; with bootstrap_servers (and kafka: more admin client settings, e.g. " +
      "security) it is resolved and checked now. " +
      "dry_run => true only shows what would be written and where each partition would start.",
    Seq(Stream, Param("type", StringType, required = true)) ++ Store ++ Seq(
      Param("bootstrap_servers", StringType),
      Kafka,
      Partition,
      Task,
      Param("offset", LongType),
      Param("timestamp", LongType),
      Param("kind", StringType),
      Param("payload", StringType),
      Param("dry_run", BooleanType, default = "false")
    ),
    StartpointRows
  ) {
    override protected def run(a: Args): Seq[Seq[Any]] = {
      val startpoint = Startpoint.of(
        a.string("type"),
        a.long("offset"),
        a.long("timestamp"),
        a.string("kind"),
        a.string("payload")
      )
      withCommands(a, kafka(a)) { c =>
        val entries =
          if (a.bool("dry_run"))
            c.preview(a.string("stream"), partition(a), task(a), startpoint)
          else c.set(a.string("stream"), partition(a), task(a), startpoint)
        entries.map(startpointRow)
      }
    }
  }

  private val getStartpoint = new StreamctlProcedure(
    "get_startpoint",
    "The startpoint stored for exactly this stream, partition and task (none for the partition-wide key): one row or none.",
    Seq(Stream, Param("partition", IntegerType, required = true)) ++ Store :+ Task,
    StructType(Seq(StructField("startpoint", StartpointType, nullable = false)))
  ) {
    override protected def run(a: Args): Seq[Seq[Any]] = withCommands(a, None) { c =>
      c.get(a.string("stream"), a.int("partition"), task(a)).map(sp =>
        Seq(startpointValue(sp))
      ).toSeq
    }
  }

  private val listStartpoints = new StreamctlProcedure(
    "list_startpoints",
    "Every stored startpoint, partition-wide and task-level, sorted by key; corrupt ones with their error.",
    Store,
    StartpointRows
  ) {
    override protected def run(a: Args): Seq[Seq[Any]] =
      withCommands(a, None)(_.list().map(startpointRow))
  }

  private val deleteStartpoints = new StreamctlProcedure(
    "delete_startpoints",
    "Deletes a stream's startpoints (of one partition, of one task when given), corrupt ones too; returns them.",
    Stream +: Store :+ Partition :+ Task,
    StartpointRows
  ) {
    override protected def run(a: Args): Seq[Seq[Any]] =
      withCommands(
        a,
        None
      )(_.delete(a.string("stream"), partition(a), task(a)).map(startpointRow))
  }

  private val startpointStore = new StreamctlProcedure(
    "startpoint_store",
    "Where the query's metadata store (and so its startpoints) is.",
    Store,
    StructType(Seq(StructField("location", StringType, nullable = false)))
  ) {
    override protected def run(a: Args): Seq[Seq[Any]] = Seq(Seq(storeLocation(a)))
  }

  private val describeTasks = new StreamctlProcedure(
    "describe_tasks",
    "The SSP -> task mapping the query recorded, one row per (source, stream partition, task), with the executor " +
      "host affinity assigned the task.",
    Store,
    StructType(Seq(
      StructField("source", StringType, nullable = false),
      StructField("stream", StringType, nullable = false),
      StructField("partition", IntegerType, nullable = false),
      StructField("task", StringType, nullable = false),
      StructField("executor", StringType)
    ))
  ) {
    override protected def run(a: Args): Seq[Seq[Any]] =
      TaskListing.rows(storeLocation(a), hadoopConf).map(r =>
        Seq(r.source, r.stream, r.partition, r.task, r.executor)
      )
  }

  private val describeLocality = new StreamctlProcedure(
    "describe_locality",
    "The task -> executor assignment of the query's streamctl sources (host affinity), one row per task.",
    Store,
    StructType(Seq("source", "task", "executor_id", "host", "location").map(StructField(
      _,
      StringType,
      nullable = false
    )))
  ) {
    override protected def run(a: Args): Seq[Seq[Any]] =
      LocalityListing.rows(storeLocation(a), hadoopConf).map(r =>
        Seq(r.source, r.task, r.executorId, r.host, r.location)
      )
  }

  private val liveExecutors = new StreamctlProcedure(
    "live_executors",
    "The executors tasks can be placed on now (the driver excluded), by host and id.",
    Nil,
    StructType(Seq(
      StructField("id", StringType, nullable = false),
      StructField("host", StringType, nullable = false)
    ))
  ) {
    override protected def run(a: Args): Seq[Seq[Any]] = {
      val registry = new ExecutorRegistry
      registry.seed(SparkExecutors.active(SparkSession.active.sparkContext))
      registry.live.map(e => Seq(e.id, e.host))
    }
  }

  private val endOfStream = new StreamctlProcedure(
    "end_of_stream",
    "Declares the inputs of a running query (of this session) ended: it finishes what it admitted, stops, and " +
      "sends end-of-stream to every partition of every intermediate stream it writes.",
    Seq(
      Param("query_id", StringType, required = true),
      Param("run_id", StringType, required = true)
    ),
    StructType(Seq(StructField("query_id", StringType, nullable = false)))
  ) {
    override protected def run(a: Args): Seq[Seq[Any]] = {
      val (id, run) = (a.string("query_id"), a.string("run_id"))
      val query = QueryLookup.find(id).filter(q => q.runId.toString == run && q.isActive).getOrElse(
        throw StreamctlException(
          s"end_of_stream: query $id (run $run) is not running in this session"
        )
      )
      QueryControlRegistry.requestEnd(id, run)
      try { query.processAllAvailable(); query.stop() }
      catch {
        // The query failed while finishing (or the wait was cut short): nothing is sent
        // downstream, and the request's bookkeeping goes.
        case NonFatal(e) => QueryControlRegistry.abandonEnd(id, run); throw e
      }
      QueryControlRegistry.completeEnd(id, run)
      Seq(Seq(id))
    }
  }

  val byName: Map[String, StreamctlProcedure] = Seq(
    setStartpoint,
    getStartpoint,
    listStartpoints,
    deleteStartpoints,
    startpointStore,
    describeTasks,
    describeLocality,
    liveExecutors,
    endOfStream
  ).map(p => p.procedureName -> p).toMap

  private def storeLocation(a: Args): String =
    StoreLayout.locate(
      Option(a.string(Checkpoint.name)).filter(_.nonEmpty),
      Option(a.string(StorePath.name)).filter(_.nonEmpty)
    ).getOrElse(throw StreamctlException(
      "Give the query's checkpoint (its checkpointLocation) or metadata_store_path (its 'metadata.store.path' option)"
    ))

  private def hadoopConf: Configuration = SessionHadoopConf.of(SparkSession.active)

  /** The admin client settings of a call that names bootstrap servers. */
  private def kafka(a: Args): Option[KafkaParams] =
    Option(a.string("bootstrap_servers")).filter(_.nonEmpty).map { s =>
      KafkaParams(a.stringMap(Kafka.name) + ("bootstrap.servers" -> s))
    }

  private def partition(a: Args): Option[Int] = Option(a.int("partition")).map(_.intValue)
  private def task(a: Args): Option[TaskName] = TaskName.given(a.string("task"), a.string("stream"))

  private def withCommands[T](
      a: Args,
      kafka: Option[KafkaParams]
  )(f: StartpointCommands => T): T = {
    val location = storeLocation(a)
    val admin = kafka.map(KafkaSystemAdmin(_))
    val commands = new StartpointCommands(MetadataStore.open(location, hadoopConf), admin, location)
    try f(commands)
    finally commands.close()
  }

  private def startpointValue(sp: Startpoint): Row = {
    val f = sp.fields
    Row(f.typeName, f.offset, f.timestampMs, f.kind, f.payload, sp.creationTimeMs)
  }

  private def startpointRow(e: StartpointEntry): Seq[Any] = Seq(
    e.storeKey,
    e.key.ssp.stream,
    e.key.ssp.partition,
    e.key.task.map(_.name),
    e.startpoint.toOption.map(startpointValue),
    e.description,
    e.resolution.map(_.offset),
    e.resolution.map(_.beyondData)
  )
}
