package streamctl.spark

import org.apache.spark.sql.connector.catalog.procedures.BoundProcedure
import org.apache.spark.sql.types.StructType

/**
 * Spark 4.1 and later bind a `CALL` to every parameter, filling in the defaults of those left out:
 * a streamctl procedure is its own bound procedure.
 */
private[spark] object ProcedureBinding {

  /** What [[StreamctlProcedure]] is besides an `UnboundProcedure`. */
  trait Bound extends BoundProcedure

  def bind(procedure: StreamctlProcedure, inputType: StructType): BoundProcedure = procedure
}
