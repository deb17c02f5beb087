package streamctl.spark

import org.apache.spark.sql.connector.read.streaming.Offset

import streamctl.Json
import streamctl.system.SSP

/**
 * The broker's head per SSP, as last seen by the planner; shown as `latestOffset` in query
 * progress.
 */
final case class HeadOffset(heads: Map[SSP, Long]) extends Offset {
  override lazy val json: String = {
    val root = Json.obj()
    val h = root.putObject("heads")
    heads.toSeq.sortBy(_._1).foreach { case (ssp, o) => h.put(ssp.key, o) }
    Json.write(root)
  }
}
