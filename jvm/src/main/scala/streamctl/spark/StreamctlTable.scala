package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{SupportsRead, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.catalog.TableCapability._
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{
  Batch,
  InputPartition,
  PartitionReaderFactory,
  Scan,
  ScanBuilder
}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import streamctl.planner.{BatchRead, ReaderConfig, SourceOptions}
import streamctl.system.KafkaSystemAdmin

/**
 * `format("streamctl")` as a table. `options` are the options it was created with: for a sink, the
 * `writeStream` options, which is how a query's in-band control finds the sink's stream and
 * producer settings before any batch builds its write ([[QueryControl]]).
 *
 * No `BATCH_WRITE`: batch writes go through the provider's `CreatableRelationProvider`
 * ([[BatchWriter]]), which, like Spark's Kafka sink, needs no `.mode("append")`.
 */
class StreamctlTable(val options: Map[String, String]) extends SupportsRead with SupportsWrite {
  override def name(): String = "streamctl"

  override def schema(): StructType = SourceSchema(StreamctlTable.includeHeaders(options))

  override def capabilities(): java.util.Set[TableCapability] =
    Set(MICRO_BATCH_READ, BATCH_READ, STREAMING_WRITE, ACCEPT_ANY_SCHEMA).asJava

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = () =>
    new Scan {
      // Validated here, before any batch, so a bad option fails the query at its start.
      private val parsed = SourceOptions(options.asCaseSensitiveMap().asScala.toMap)

      override def readSchema(): StructType = SourceSchema(parsed.includeHeaders)

      override def supportedCustomMetrics(): Array[CustomMetric] =
        SqlMetrics.scan(parsed.intermediateStreams.nonEmpty)

      override def description(): String = StreamctlMicroBatchStream.description(parsed)

      override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream = {
        parsed.checkStreaming()
        new StreamctlMicroBatchStream(
          parsed,
          checkpointLocation,
          SessionHadoopConf.of(SparkSession.active)
        )
      }

      override def toBatch: Batch = new Batch {
        /* Planned once per scan, on the driver, when Spark asks: the offsets are fixed from then
         * on. */
        private lazy val reads = {
          parsed.checkBatch()
          val admin = KafkaSystemAdmin(parsed.kafka)
          try BatchRead.plan(parsed, admin)
          finally admin.close()
        }
        override def planInputPartitions(): Array[InputPartition] =
          reads.map(TaskInputPartition(_)).toArray
        override def createReaderFactory(): PartitionReaderFactory = {
          val sc = SparkSession.active.sparkContext
          BatchReaderFactory(
            sc.broadcast(ReaderConfig(parsed, realTime = false)),
            ReaderAccumulator.register(sc)
          )
        }
      }
    }

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = new SinkWriteBuilder(info)
}

object StreamctlTable {

  /** `includeHeaders`, read before the options are checked: Spark asks for the schema first. */
  def includeHeaders(options: Map[String, String]): Boolean =
    options.collectFirst {
      case (k, v) if k.equalsIgnoreCase(SourceOptions.IncludeHeaders.name) =>
        SourceOptions.IncludeHeaders.parse(k, v)
    }.getOrElse(false)
}
