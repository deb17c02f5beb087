package streamctl.spark

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

import streamctl.system.KafkaTaskReader

/**
 * What the Spark UI's SQL tab shows on a streamctl scan and write, per batch (DataSource V2 custom
 * metrics, summed over the batch's Spark task attempts). The counts come from the feature code
 * ([[KafkaTaskReader]], [[SinkDataWriter]]); this only names them for Spark. Spark instantiates
 * each metric class by name on the driver to aggregate, hence one public no-argument class per
 * metric.
 *
 * {{{
 * override def supportedCustomMetrics = SqlMetrics.scan(intermediate = false)  // the Scan, on the driver
 * override def currentMetricsValues = SqlMetrics.of(reader, intermediate = false) // the PartitionReader
 * }}}
 *
 * A source with no intermediate stream reads no control message, and a plain sink sends none, so
 * their nodes have no such figure: every figure is an accumulator Spark ships to and back from each
 * task attempt and merges on the driver.
 */
object SqlMetrics {
  val RecordsRead = "streamctlRecordsRead"
  val ControlMessagesRead = "streamctlControlMessagesRead"
  val RecordsSkipped = "streamctlRecordsSkipped"
  val RecordsWithheld = "streamctlRecordsWithheld"
  val RecordsWritten = "streamctlRecordsWritten"
  val ControlMessagesSent = "streamctlControlMessagesSent"

  /** The scan's figures; `intermediate`: whether the source reads any intermediate stream. */
  def scan(intermediate: Boolean): Array[CustomMetric] =
    Array[CustomMetric](new RecordsReadMetric) ++
      (if (intermediate) Some(new ControlMessagesReadMetric) else None) ++
      Array(new RecordsSkippedMetric, new RecordsWithheldMetric)

  /** The streaming write's figures; `intermediate`: whether it writes an intermediate stream. */
  def write(intermediate: Boolean): Array[CustomMetric] =
    Array[CustomMetric](new RecordsWrittenMetric) ++
      (if (intermediate) Some(new ControlMessagesSentMetric) else None)

  /** One reader's counts so far (Spark asks every so many rows and at the end). */
  def of(reader: KafkaTaskReader, intermediate: Boolean): Array[CustomTaskMetric] =
    Array[CustomTaskMetric](TaskValue(RecordsRead, reader.recordsRead)) ++
      (if (intermediate) Some(TaskValue(ControlMessagesRead, reader.controlMessagesRead))
       else None) ++
      Array(
        TaskValue(RecordsSkipped, reader.recordsSkipped),
        TaskValue(RecordsWithheld, reader.withheld.toLong)
      )

  def written(records: Long): Array[CustomTaskMetric] = Array(TaskValue(RecordsWritten, records))

  private final case class TaskValue(name: String, value: Long) extends CustomTaskMetric
}

/**
 * A figure Spark sums over a batch's task attempts. Spark makes each metric by its class name with
 * no arguments, hence one small subclass per figure below.
 */
sealed abstract class StreamctlSumMetric(metricName: String, text: String) extends CustomSumMetric {
  override def name(): String = metricName
  override def description(): String = text
}

final class RecordsReadMetric
    extends StreamctlSumMetric(SqlMetrics.RecordsRead, "streamctl records read")

final class ControlMessagesReadMetric
    extends StreamctlSumMetric(SqlMetrics.ControlMessagesRead, "streamctl control messages read")

final class RecordsSkippedMetric
    extends StreamctlSumMetric(SqlMetrics.RecordsSkipped, "streamctl records skipped (data loss)")

final class RecordsWithheldMetric
    extends StreamctlSumMetric(
      SqlMetrics.RecordsWithheld,
      "streamctl records withheld by the chooser"
    )

final class RecordsWrittenMetric
    extends StreamctlSumMetric(SqlMetrics.RecordsWritten, "streamctl records written")

final class ControlMessagesSentMetric
    extends StreamctlSumMetric(SqlMetrics.ControlMessagesSent, "streamctl control messages sent")
