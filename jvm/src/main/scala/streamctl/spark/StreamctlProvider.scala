package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SaveMode, SparkSession, SQLContext}
import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.{BaseRelation, CreatableRelationProvider, DataSourceRegister}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import streamctl.StreamctlException
import streamctl.config.OptionSet
import streamctl.control.SinkOptions
import streamctl.planner.SourceOptions

/**
 * `format("streamctl")`: a Kafka source and sink with the options, columns and records of Spark's
 * `format("kafka")`, plus Samza-style stream control.
 *
 * {{{
 * spark.readStream.format("streamctl")
 *   .option("kafka.bootstrap.servers", "127.0.0.1:9092")
 *   .option("subscribe", "orders,customers")
 *   .load()
 * }}}
 */
class StreamctlProvider extends TableProvider with CreatableRelationProvider
    with DataSourceRegister {
  override def shortName(): String = "streamctl"

  // Set when Spark resolves a source: it asks a provider's schema only on read paths, on the
  // instance that then gets getTable (a sink's getTable comes with the input's schema instead).
  private var readPath = false

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    SparkLine.check()
    readPath = true
    SourceSchema(StreamctlTable.includeHeaders(options.asCaseSensitiveMap().asScala.toMap))
  }

  /* The sink's getTable then receives the query's input schema, so its columns are checked at
   * start(). */
  override def supportsExternalMetadata(): Boolean = true

  /**
   * Called on the caller's thread when a source (`load()`) or sink (`start()`, `save()`) is
   * resolved, before any query starts: options are checked here, so a bad one fails that call,
   * naming the option, as Spark's Kafka source does, rather than the query later.
   */
  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: java.util.Map[String, String]
  ): Table = {
    SparkLine.check()
    val options = properties.asScala.toMap
    StreamctlProvider.check(options, schema, readPath)
    StreamctlProvider.warnUnusedDelegationTokens(SparkSession.active, options)
    QueryListeners.ensureRegistered(SparkSession.active)
    KafkaClientsShutdown.ensureRegistered(SparkSession.active.sparkContext)
    new StreamctlTable(options)
  }

  /** `df.write.format("streamctl").save()` ([[BatchWriter]]). */
  override def createRelation(
      context: SQLContext,
      mode: SaveMode,
      parameters: Map[String, String],
      data: DataFrame
  ): BaseRelation = {
    SparkLine.check()
    KafkaClientsShutdown.ensureRegistered(context.sparkContext)
    BatchWriter.write(data, mode, parameters)
    new BaseRelation {
      override def sqlContext: SQLContext = context
      override def schema: StructType = data.schema
    }
  }
}

object StreamctlProvider {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[StreamctlProvider])
  // Sessions already told that their Kafka delegation tokens go unused (once each).
  private val toldOfTokens = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  /**
   * Spark's Kafka connector fills in `sasl.jaas.config` from the delegation token Spark obtained
   * for a cluster set up with `spark.kafka.clusters.<id>.*`; streamctl never loads that connector.
   * A job moved from format("kafka") that relied on it then fails to authenticate in Kafka's own
   * words, far from the cause: said once per session, where the tokens are set up and the options
   * give no `kafka.sasl.jaas.config`.
   */
  private[spark] def warnUnusedDelegationTokens(
      session: SparkSession,
      options: Map[String, String]
  ): Unit = {
    val clusters = session.conf.getAll.keys.collect {
      case k if k.startsWith("spark.kafka.clusters.") && k.endsWith(".auth.bootstrap.servers") =>
        k.stripPrefix("spark.kafka.clusters.").stripSuffix(".auth.bootstrap.servers")
    }.toSeq.sorted
    val jaas = options.keys.exists(k => OptionSet.canonical(k) == "kafka.sasl.jaas.config")
    if (clusters.nonEmpty && !jaas && toldOfTokens.add(System.identityHashCode(session).toString))
      log.warn(
        s"Spark's Kafka delegation tokens (spark.kafka.clusters.${clusters.mkString(", ")}) are not applied by " +
          "format(\"streamctl\"): give the credentials as option 'kafka.sasl.jaas.config' (a keytab, say) or in " +
          "a JAAS file, as for any Kafka client; otherwise its Kafka clients connect without them"
      )
  }

  /**
   * Checks a source's or a sink's options against their registries (SourceOptions.Registry,
   * SinkOptions.Registry), and a sink's input columns. A source is what Spark asked a schema of
   * (`readPath`), or what names what to read (`subscribe`, `subscribePattern`, `assign`) but no
   * `topic` to write, as a source read with a user-given schema does: streamctl's schema is fixed,
   * so that is an error too.
   */
  private[spark] def check(
      options: Map[String, String],
      schema: StructType,
      readPath: Boolean
  ): Unit = {
    val keys = options.keySet.map(OptionSet.canonical)
    val reads = Seq(
      SourceOptions.Subscribe,
      SourceOptions.SubscribePattern,
      SourceOptions.Assign
    ).flatMap(_.names)
    if (
      readPath || (reads.exists(keys.contains) && !SinkOptions.Topic.names.exists(keys.contains))
    ) {
      val parsed = SourceOptions(options)
      if (!readPath && schema != SourceSchema(parsed.includeHeaders))
        throw StreamctlException(
          "format(\"streamctl\") has a fixed schema: do not give the source one with .schema(...). (A " +
            "sink whose options name topics to read, subscribe, subscribePattern or assign, and no 'topic' is " +
            "taken for a source: give the sink option 'topic', or leave the read options out)"
        )
    } else SinkWrite.prepare(options, schema)
  }
}
