package streamctl.spark

import org.apache.spark.sql.types._

/**
 * The rows of `format("streamctl")`: Spark's Kafka source columns, in Spark's order and types
 * (`headers` only with `includeHeaders=true`, as in Spark), then streamctl's `task` and
 * `watermark`. So a `select` written for `format("kafka")` works unchanged.
 *
 * {{{
 * SourceSchema(includeHeaders = true).fieldNames
 * // key, value, topic, partition, offset, timestamp, timestampType, headers, task, watermark
 * }}}
 */
object SourceSchema {
  val HeaderType: StructType = new StructType()
    .add("key", StringType, nullable = true)
    .add("value", BinaryType, nullable = true)

  private def base: StructType = new StructType()
    .add("key", BinaryType, nullable = true)
    .add("value", BinaryType, nullable = true)
    .add("topic", StringType, nullable = true)
    .add("partition", IntegerType, nullable = true)
    .add("offset", LongType, nullable = true)
    .add("timestamp", TimestampType, nullable = true)
    .add("timestampType", IntegerType, nullable = true)

  private def streamctl(s: StructType): StructType = s
    .add("task", StringType, nullable = false)
    .add("watermark", TimestampType, nullable = true)

  val withoutHeaders: StructType = streamctl(base)
  val withHeaders: StructType =
    streamctl(base.add("headers", ArrayType(HeaderType), nullable = true))

  def apply(includeHeaders: Boolean): StructType =
    if (includeHeaders) withHeaders else withoutHeaders

  /**
   * How many columns a row has (constants, so that row writers need not load Spark's type classes).
   */
  final val FieldCount = 9
  final val FieldCountWithHeaders = 10
  require(withoutHeaders.length == FieldCount && withHeaders.length == FieldCountWithHeaders)
}
