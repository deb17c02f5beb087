package streamctl.spark

import org.apache.spark.sql.connector.read.streaming.PartitionOffset

import streamctl.control.SspControlStates
import streamctl.planner.ReaderEnd
import streamctl.system.{SSP, TaskName}

/**
 * Where one task's reader stands in real-time mode, as Spark collects it from the executor when the
 * reader's batch ends ([[StreamctlMicroBatchStream.mergeOffsets]]): per SSP the next offset to
 * read, and the control states of its intermediate SSPs (JSON, as the offset log holds them), so
 * the end offset carries the bookkeeping that matches the positions.
 */
final case class TaskPartitionOffset(
    task: TaskName,
    positions: Map[SSP, Long],
    controlJson: Option[String]
) extends PartitionOffset {

  def readerEnd: ReaderEnd =
    ReaderEnd(
      positions,
      controlJson.map(SspControlStates.parse(_, s"control states reported by task '$task'"))
    )
}
