package streamctl.spark

import org.apache.spark.{SparkException, TaskContext}
import org.apache.spark.sql.{DataFrame, SaveMode}

import streamctl.StreamctlException

/**
 * `df.write.format("streamctl").save()`: the rows of a batch DataFrame written by the sink's own
 * writers ([[SinkWriterFactory]]), plain records or (with `intermediate=true`) an intermediate
 * stream without control messages.
 *
 * Why through Spark's V1 `CreatableRelationProvider` rather than a V2 batch write: like Spark's
 * Kafka sink (which Spark keeps on the V1 path for the same reason) it accepts the default save
 * mode; a V2 table that can batch-write refuses `ErrorIfExists` before the source is asked. A write
 * that fails in an executor is reported with streamctl's own error (`StreamctlException`, e.g.
 * "Kafka at ... failed while writing to stream 'x': ...") instead of Spark's "Job aborted"
 * wrapping, which PySpark cannot convert.
 *
 * {{{
 * BatchWriter.write(df, SaveMode.ErrorIfExists, Map("kafka.bootstrap.servers" -> "k:9092", "topic" -> "out"))
 * }}}
 */
private[spark] object BatchWriter {
  def write(data: DataFrame, mode: SaveMode, options: Map[String, String]): Unit = {
    mode match {
      case SaveMode.Append | SaveMode.ErrorIfExists =>
      case other => throw StreamctlException(
          s"""Save mode ${other.name} is not supported by format("streamctl"): a topic is only appended to """ +
            "(use the default mode or 'append', as with format(\"kafka\"))"
        )
    }
    val write = SinkWrite.prepare(options, data.schema)
    write.checkTopic()
    val factory = write.factory(write.writeTransactions())
    try data.queryExecution.toRdd.foreachPartition { rows =>
        val context = TaskContext.get()
        val writer = factory.createWriter(context.partitionId(), context.taskAttemptId())
        try {
          rows.foreach(writer.write)
          writer.commit()
        } catch {
          case t: Throwable =>
            writer.abort()
            throw t
        } finally writer.close()
      }
    catch {
      // The executor's error, first; Spark's wrapping stays attached as the cause.
      case e: SparkException => throw StreamctlException.in(e)
          .map(s => StreamctlException(s.getMessage, e, s.condition, s.parameters))
          .getOrElse(e)
    }
  }
}
