package streamctl.spark

/**
 * Spark 3.5 has no DataSource V2 procedures (no `CALL`, no `ProcedureCatalog`): a streamctl
 * procedure is no Spark type there and there is no `StreamctlCatalog` (`spark-4.0-4.3/`).
 */
private[spark] object ProcedureBinding {
  trait Procedure
}
