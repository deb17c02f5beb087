package streamctl.spark

// Catalyst's row classes: a V2 procedure and scan hand Spark InternalRows, and GenericInternalRow
// (with UTF8String for strings) is the plain one, as Spark's own V2 sources build them.
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.catalog.procedures.{
  BoundProcedure,
  ProcedureParameter,
  UnboundProcedure
}
import org.apache.spark.sql.connector.read.Scan
import org.apache.spark.sql.types.StructType

/**
 * Spark 4.0 binds a `CALL` to exactly the arguments given (it requires as many arguments as the
 * bound procedure has parameters, and checks that of a procedure that is already a `BoundProcedure`
 * before binding it; 4.1 fills in the defaults of those left out). So a streamctl procedure is not
 * a `BoundProcedure` here: a call is bound to the parameters it names, and its row is widened to
 * the procedure's full parameter list, NULL where left out (what every optional streamctl parameter
 * defaults to, or reads as: `dry_run` NULL is false).
 */
private[spark] object ProcedureBinding {

  /** What [[StreamctlProcedure]] is to Spark: an unbound procedure only. */
  trait Procedure extends UnboundProcedure { this: StreamctlProcedure =>
    override def bind(inputType: StructType): BoundProcedure =
      ProcedureBinding.bind(this, inputType)
    override def description(): String = text
  }

  def bind(procedure: StreamctlProcedure, inputType: StructType): BoundProcedure = {
    val all = ProcedureParameters.of(procedure.params)
    val named = inputType.fieldNames.toSeq.map(n => all.indexWhere(_.name == n))
    // In the procedure's order (required ones first, as Spark asks; it rearranges the arguments to
    // it); positional or unknown arguments: bound to every parameter, as they are written.
    val passed = if (named.contains(-1)) all.indices else all.indices.filter(named.contains)
    new BoundProcedure {
      override def name(): String = procedure.name()
      override def description(): String = procedure.description()
      override def isDeterministic: Boolean = procedure.isDeterministic
      override def parameters(): Array[ProcedureParameter] = passed.map(all(_)).toArray
      override def call(input: InternalRow): java.util.Iterator[Scan] = {
        val full = new GenericInternalRow(all.length)
        for ((j, i) <- passed.zipWithIndex if i < input.numFields)
          full.update(j, input.get(i, all(j).dataType()))
        procedure.call(full)
      }
    }
  }
}
