package streamctl.spark

import org.apache.spark.sql.connector.read.streaming.Offset

import streamctl.plan.Heads
import streamctl.system.SSP

/**
 * The broker's head per SSP, as last seen by the planner; shown as `latestOffset` in query progress
 * ([[streamctl.plan.Heads]]).
 */
final case class HeadOffset(heads: Map[SSP, Long]) extends Offset {
  override lazy val json: String = Heads.write(heads)
}
