package streamctl.spark

import org.apache.spark.sql.connector.read.InputPartition

import streamctl.system.{SSP, SspRange}

/**
 * One task of one batch: the SSP ranges it reads, where it would like to run,
 * `bootstrapHeads` (the start-time head of each bootstrap SSP it reads, for its chooser),
 * and its in-band control start.
 */
final case class TaskInputPartition(
    task: String,
    ranges: Seq[SspRange],
    locations: Array[String],
    bootstrapHeads: Map[SSP, Long] = Map.empty,
    control: Option[TaskControl] = None) extends InputPartition {
  override def preferredLocations(): Array[String] = locations
}
