package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * `format("streamctl")`: a Kafka source and sink with Samza-style stream control.
 *
 * {{{
 * spark.readStream.format("streamctl")
 *   .option("kafka.bootstrap.servers", "127.0.0.1:9092")
 *   .option("streams", "orders,customers")
 *   .load()
 * }}}
 */
class StreamctlProvider extends TableProvider with DataSourceRegister {
  override def shortName(): String = "streamctl"

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = SourceSchema.schema

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: java.util.Map[String, String]): Table =
    new StreamctlTable(properties.asScala.toMap)
}
