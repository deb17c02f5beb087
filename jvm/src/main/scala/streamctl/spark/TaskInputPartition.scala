package streamctl.spark

import org.apache.spark.sql.connector.read.InputPartition

import streamctl.system.SspRange

/** One task of one batch: the SSP ranges it reads, where it would like to run, and its in-band control start. */
final case class TaskInputPartition(
    task: String,
    ranges: Seq[SspRange],
    locations: Array[String],
    control: Option[TaskControl] = None) extends InputPartition {
  override def preferredLocations(): Array[String] = locations
}
