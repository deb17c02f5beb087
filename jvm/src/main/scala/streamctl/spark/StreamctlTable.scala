package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{SupportsRead, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.catalog.TableCapability._
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import streamctl.plan.SourceOptions

/**
 * `format("streamctl")` as a table. `options` are the options it was created with: for a
 * sink, the `writeStream` options, which is how a query's in-band control finds the sink's
 * stream and producer settings before any batch builds its write ([[QueryControl]]).
 */
class StreamctlTable(val options: Map[String, String]) extends SupportsRead with SupportsWrite {
  override def name(): String = "streamctl"

  override def schema(): StructType = SourceSchema.schema

  override def capabilities(): java.util.Set[TableCapability] =
    Set(MICRO_BATCH_READ, STREAMING_WRITE, BATCH_WRITE, ACCEPT_ANY_SCHEMA).asJava

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = () => new Scan {
    // Validated here, before any batch, so a bad option fails the query at its start.
    private val parsed = SourceOptions(options.asCaseSensitiveMap().asScala.toMap)

    override def readSchema(): StructType = SourceSchema.schema

    override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream =
      new StreamctlMicroBatchStream(parsed, checkpointLocation, SparkSession.active.sparkContext.hadoopConfiguration)
  }

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = new IntermediateWriteBuilder(info)
}
