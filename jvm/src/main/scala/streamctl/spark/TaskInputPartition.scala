package streamctl.spark

import org.apache.spark.sql.connector.read.InputPartition

import streamctl.system.SspRange

/** One task of one batch: the SSP ranges it reads, and where it would like to run. */
final case class TaskInputPartition(task: String, ranges: Seq[SspRange], locations: Array[String]) extends InputPartition {
  override def preferredLocations(): Array[String] = locations
}
