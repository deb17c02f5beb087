package streamctl.spark

import org.apache.spark.sql.types._

/** The rows of `spark.readStream.format("streamctl")`. */
object SourceSchema {
  val HeaderType: StructType = new StructType()
    .add("key", StringType, nullable = false)
    .add("value", BinaryType, nullable = true)

  val schema: StructType = new StructType()
    .add("key", BinaryType, nullable = true)
    .add("value", BinaryType, nullable = true)
    .add("stream", StringType, nullable = false)
    .add("partition", IntegerType, nullable = false)
    .add("offset", LongType, nullable = false)
    .add("timestamp", TimestampType, nullable = true)
    .add("headers", ArrayType(HeaderType, containsNull = false), nullable = true)
    .add("task", StringType, nullable = false)
    .add("watermark", TimestampType, nullable = true)

  /** How many columns a row has (a constant, so that row writers need not load Spark's type classes). */
  final val FieldCount = 9
  require(schema.length == FieldCount)
}
