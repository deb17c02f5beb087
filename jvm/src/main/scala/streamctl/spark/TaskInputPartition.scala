package streamctl.spark

import org.apache.spark.sql.connector.read.InputPartition

import streamctl.planner.TaskRead

/**
 * One task of one batch, as Spark schedules it: where it would like to run comes from host
 * affinity.
 */
final case class TaskInputPartition(read: TaskRead) extends InputPartition {
  override def preferredLocations(): Array[String] = read.locations
}
