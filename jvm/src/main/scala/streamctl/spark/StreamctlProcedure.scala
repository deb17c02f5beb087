package streamctl
package spark

import scala.jdk.CollectionConverters._

// Catalyst's row classes: a V2 procedure and scan hand Spark InternalRows, and GenericInternalRow
// (with UTF8String for strings) is the plain one, as Spark's own V2 sources build them.
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.read.{LocalScan, Scan}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * A procedure parameter: optional ones default to NULL unless `default` (a SQL literal) says
 * otherwise.
 */
private[spark] final case class Param(
    name: String,
    dataType: DataType,
    required: Boolean = false,
    default: String = "NULL"
)

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
 * of those, null, or a `Row` of them for a struct column), in the order of `result`'s columns.
 */
private[spark] abstract class StreamctlProcedure(
    val procedureName: String,
    val text: String,
    val params: Seq[Param],
    val result: StructType
) extends ProcedureBinding.Procedure {

  protected def run(args: Args): Seq[Seq[Any]]

  // Not `override`: on Spark 3.5 (no DataSource V2 procedures) nothing declares these; Spark's
  // `description()` is a default method, so the line's ProcedureBinding.Procedure overrides it.
  def name(): String = procedureName
  // Each call reads or changes state outside Spark (the metadata store, a running query).
  def isDeterministic: Boolean = false

  def call(input: InternalRow): java.util.Iterator[Scan] = {
    val out = rows(input).map(r =>
      new GenericInternalRow(r.map(internal).toArray[Any]): InternalRow
    ).toArray
    val scan: Scan = new LocalScan {
      override def readSchema(): StructType = result
      override def rows(): Array[InternalRow] = out
    }
    Iterator(scan).asJava
  }

  /**
   * The result rows of a call whose arguments are `input` (one value per parameter, in `params`'
   * order, Spark's internal types), as plain values: what `CALL` returns, for [[ProcedureCalls]].
   */
  def rows(input: InternalRow): Seq[Seq[Any]] = run(new Args(params, input))

  private def internal(v: Any): Any = v match {
    case null | None => null
    case Some(x) => internal(x)
    case s: String => UTF8String.fromString(s)
    case r: Row => new GenericInternalRow(r.toSeq.map(internal).toArray[Any])
    case other => other
  }
}
