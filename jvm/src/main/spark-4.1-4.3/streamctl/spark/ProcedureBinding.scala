package streamctl.spark

import org.apache.spark.sql.connector.catalog.procedures.{
  BoundProcedure,
  ProcedureParameter,
  UnboundProcedure
}
import org.apache.spark.sql.types.StructType

/**
 * Spark 4.1 and later bind a `CALL` to every parameter, filling in the defaults of those left out:
 * a streamctl procedure is its own bound procedure.
 */
private[spark] object ProcedureBinding {

  /** What [[StreamctlProcedure]] is to Spark. */
  trait Procedure extends UnboundProcedure with BoundProcedure { this: StreamctlProcedure =>
    override def bind(inputType: StructType): BoundProcedure = this
    override def description(): String = text
    override def parameters(): Array[ProcedureParameter] = ProcedureParameters.of(params)
  }
}
