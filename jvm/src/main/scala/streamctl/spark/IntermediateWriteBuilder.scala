package streamctl.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}
import org.apache.spark.sql.types._

import streamctl.StreamctlException
import streamctl.control.SinkOptions
import streamctl.system.KafkaSystemAdmin

/**
 * Writes `key` (binary or string, optional), `value` (binary or string) and `partition`
 * (int, optional) to an intermediate stream, each value framed with type byte 0. Other
 * columns are ignored, as Spark's Kafka sink does. Delivery is at-least-once: a batch that
 * is retried after a failure may write some records twice.
 */
final class IntermediateWriteBuilder(info: LogicalWriteInfo) extends WriteBuilder {
  private val raw = info.options().asCaseSensitiveMap().asScala.toMap
  private val options = SinkOptions(raw) // checked for batch writes too, which send no control messages
  private val layout = RowLayout(info.schema(), options.stream)

  override def build(): Write = new Write {
    private lazy val factory = {
      val admin = KafkaSystemAdmin(options.kafka)
      val partitions = try admin.partitionCountOf(options.stream, "option 'stream' of the sink") finally admin.close()
      IntermediateWriterFactory(options.kafka, options.stream, partitions, layout)
    }

    // Control messages of the query go out from the driver, through its QueryControl: an active
    // message before the writers start (after an idle spell), watermarks and end-of-stream after
    // the writers committed. Outside a streaming query there is none, and nothing is sent.
    override def toStreaming: StreamingWrite = new StreamingWrite {
      private val query = QueryControlRegistry.current()
      query.foreach(_.addSinkFor(raw))
      override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory = {
        query.foreach(_.batchStarted(QueryLookup.currentBatchId.getOrElse(-1L)))
        factory
      }
      override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
        query.foreach(_.batchCommitted(epochId, wroteData = messages.exists {
          case m: IntermediateCommitMessage => m.records > 0
          case _ => false
        }))
      override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit = query.foreach(_.batchAborted(epochId))
    }

    override def toBatch: BatchWrite = new BatchWrite {
      override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = factory
      override def commit(messages: Array[WriterCommitMessage]): Unit = ()
      override def abort(messages: Array[WriterCommitMessage]): Unit = ()
    }
  }
}

/** Where the sink's columns are in the input rows, checked once on the driver. */
final case class RowLayout(key: Int, keyIsString: Boolean, value: Int, valueIsString: Boolean, partition: Int)

object RowLayout {
  def apply(schema: StructType, stream: String): RowLayout = {
    def find(name: String, allowed: Seq[DataType], required: Boolean): (Int, Boolean) =
      schema.fields.indexWhere(_.name.equalsIgnoreCase(name)) match {
        case -1 if required => throw StreamctlException(
          s"Writing to stream '$stream' needs a '$name' column; the input has ${schema.fieldNames.mkString(", ")}")
        case -1 => (-1, false)
        case i =>
          val t = schema.fields(i).dataType
          if (!allowed.contains(t)) throw StreamctlException(
            s"Column '$name' written to stream '$stream' must be ${allowed.map(_.simpleString).mkString(" or ")}, not ${t.simpleString}")
          (i, t == StringType)
      }
    val (k, ks) = find("key", Seq(BinaryType, StringType), required = false)
    val (v, vs) = find("value", Seq(BinaryType, StringType), required = true)
    val (p, _) = find("partition", Seq(IntegerType), required = false)
    RowLayout(k, ks, v, vs, p)
  }
}
