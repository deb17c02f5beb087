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
