package streamctl
package spark

import java.util.Locale

import org.apache.spark.sql.connector.catalog.{Identifier, ProcedureCatalog}
import org.apache.spark.sql.connector.catalog.procedures.{ProcedureParameter, UnboundProcedure}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * streamctl's admin operations as SQL stored procedures, so that they work the same in a classic
 * session and over Spark Connect (where Python cannot reach the JVM): every public Python helper
 * (`StartpointManager`, `describe_tasks`, `describe_locality`, `live_executors`, `end_of_stream`)
 * is one `CALL`. Registered as catalog `streamctl` (`spark.sql.catalog.streamctl`, a runtime
 * setting: `configure_spark` and the Python helpers set it, a Connect client can too); the
 * procedures are in namespace `system` ([[StreamctlProcedures]]).
 *
 * {{{
 * spark.conf.set("spark.sql.catalog.streamctl", "streamctl.spark.StreamctlCatalog")
 * spark.sql("CALL streamctl.system.describe_tasks(checkpoint => '/chk/orders')").show()
 * }}}
 */
class StreamctlCatalog extends ProcedureCatalog {
  private var catalogName = StreamctlCatalog.DefaultName

  override def initialize(name: String, options: CaseInsensitiveStringMap): Unit =
    catalogName = name

  override def name(): String = catalogName

  override def loadProcedure(ident: Identifier): UnboundProcedure =
    Option.when(
      ident.namespace.toSeq == StreamctlCatalog.Namespace
    )(StreamctlProcedures.byName.get(ident.name.toLowerCase(Locale.ROOT)))
      .flatten.getOrElse(throw StreamctlException(
        s"No procedure ${(catalogName +: ident.namespace.toSeq :+ ident.name).mkString(".")}: catalog $catalogName has " +
          StreamctlProcedures.byName.keys.toSeq.sorted.map(p => s"$catalogName.system.$p").mkString(
            ", "
          )
      ))

  // Not `override`: Spark 4.0's ProcedureCatalog does not have it yet (4.1 added it, abstract).
  def listProcedures(namespace: Array[String]): Array[Identifier] =
    if (namespace.toSeq != StreamctlCatalog.Namespace) Array.empty
    else StreamctlProcedures.byName.keys.toArray.sorted.map(p => Identifier.of(namespace, p))
}

object StreamctlCatalog {
  val DefaultName = "streamctl"
  val Namespace: Seq[String] = Seq("system")
}

/** A [[StreamctlProcedure]]'s parameters as Spark's `ProcedureParameter`s (Spark 4.0 and later). */
private[spark] object ProcedureParameters {
  def of(params: Seq[Param]): Array[ProcedureParameter] = params.map { p =>
    val b = ProcedureParameter.in(p.name, p.dataType)
    if (!p.required) b.defaultValue(p.default)
    b.build()
  }.toArray
}
