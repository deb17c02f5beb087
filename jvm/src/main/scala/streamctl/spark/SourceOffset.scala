package streamctl.spark

import org.apache.spark.sql.connector.read.streaming.Offset

import streamctl.plan.SourcePosition

/**
 * A streamctl source's offset as Spark logs it: its JSON is the [[SourcePosition]]'s, which is
 * parsed once, when Spark hands a logged offset back
 * ([[StreamctlMicroBatchStream.deserializeOffset]]).
 */
final case class SourceOffset(position: SourcePosition) extends Offset {
  override def json: String = position.json
}
