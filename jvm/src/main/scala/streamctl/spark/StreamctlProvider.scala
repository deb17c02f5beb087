package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SaveMode, SQLContext}
import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.{BaseRelation, CreatableRelationProvider, DataSourceRegister}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * `format("streamctl")`: a Kafka source and sink with the options, columns and records of
 * Spark's `format("kafka")`, plus Samza-style stream control.
 *
 * {{{
 * spark.readStream.format("streamctl")
 *   .option("kafka.bootstrap.servers", "127.0.0.1:9092")
 *   .option("subscribe", "orders,customers")
 *   .load()
 * }}}
 */
class StreamctlProvider extends TableProvider with CreatableRelationProvider with DataSourceRegister {
  override def shortName(): String = "streamctl"

  override def inferSchema(options: CaseInsensitiveStringMap): StructType =
    SourceSchema(StreamctlTable.includeHeaders(options.asCaseSensitiveMap().asScala.toMap))

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: java.util.Map[String, String]): Table =
    new StreamctlTable(properties.asScala.toMap)

  /** `df.write.format("streamctl").save()` ([[BatchWriter]]). */
  override def createRelation(context: SQLContext, mode: SaveMode, parameters: Map[String, String], data: DataFrame): BaseRelation = {
    BatchWriter.write(data, mode, parameters)
    new BaseRelation {
      override def sqlContext: SQLContext = context
      override def schema: StructType = data.schema
    }
  }
}
