package streamctl.spark

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.catalog.{Identifier, ProcedureCatalog}
import org.apache.spark.sql.connector.catalog.procedures.{
  BoundProcedure,
  ProcedureParameter,
  UnboundProcedure
}
import org.apache.spark.sql.connector.read.{LocalScan, Scan}
import org.apache.spark.sql.types._
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.unsafe.types.UTF8String

import streamctl.StreamctlException

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

/**
 * A procedure parameter: optional ones default to NULL unless `default` (a SQL literal) says
 * otherwise.
 */
private[spark] final case class Param(
    name: String,
    dataType: DataType,
    required: Boolean = false,
    default: String = "NULL"
) {
  def spec: ProcedureParameter = {
    val b = ProcedureParameter.in(name, dataType)
    if (!required) b.defaultValue(default)
    b.build()
  }
}

/** The arguments of one call, by parameter name; NULL arguments read as null. */
private[spark] final class Args(params: Seq[Param], row: InternalRow) {
  private def at(name: String): Int = params.indexWhere(_.name == name)
  private def value[T](name: String)(read: Int => T): T = {
    val i = at(name); if (row.isNullAt(i)) null.asInstanceOf[T] else read(i)
  }

  def string(name: String): String = value(name)(i => row.getUTF8String(i).toString)
  def int(name: String): java.lang.Integer =
    value(name)(i => java.lang.Integer.valueOf(row.getInt(i)))
  def long(name: String): java.lang.Long = value(name)(i => java.lang.Long.valueOf(row.getLong(i)))
  def bool(name: String): Boolean =
    Option(value(name)(i => java.lang.Boolean.valueOf(row.getBoolean(i)))).exists(_.booleanValue)
  def stringMap(name: String): Map[String, String] = Option(value(name)(row.getMap)).map { m =>
    val (keys, values) = (m.keyArray(), m.valueArray())
    (0 until m.numElements()).map(i =>
      keys.getUTF8String(i).toString -> Option(values.getUTF8String(i)).map(_.toString).orNull
    ).toMap
  }.getOrElse(Map.empty)
}

/**
 * One procedure: `run` returns its result rows as plain values (String, Int, Long, Boolean, Option
 * of those, null), in the order of `result`'s columns.
 */
private[spark] abstract class StreamctlProcedure(
    val procedureName: String,
    text: String,
    val params: Seq[Param],
    val result: StructType
) extends UnboundProcedure with ProcedureBinding.Bound {

  protected def run(args: Args): Seq[Seq[Any]]

  override def name(): String = procedureName
  override def description(): String = text
  // Spark 4.0 binds to the arguments given, 4.1 and later to every parameter: the line's adapter.
  override def bind(inputType: StructType): BoundProcedure = ProcedureBinding.bind(this, inputType)
  override def parameters(): Array[ProcedureParameter] = params.map(_.spec).toArray
  // Each call reads or changes state outside Spark (the metadata store, a running query).
  override def isDeterministic: Boolean = false

  override def call(input: InternalRow): java.util.Iterator[Scan] = {
    val out = run(new Args(params, input)).map(r =>
      new GenericInternalRow(r.map(internal).toArray[Any]): InternalRow
    ).toArray
    val scan: Scan = new LocalScan {
      override def readSchema(): StructType = result
      override def rows(): Array[InternalRow] = out
    }
    Iterator(scan).asJava
  }

  private def internal(v: Any): Any = v match {
    case null | None => null
    case Some(x) => internal(x)
    case s: String => UTF8String.fromString(s)
    case other => other
  }
}
