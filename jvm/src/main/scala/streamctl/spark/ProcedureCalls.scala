package streamctl
package spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
// Catalyst's row classes: a procedure's arguments arrive as an InternalRow (GenericInternalRow,
// with UTF8String strings and ArrayBasedMapData maps), as CALL binds them.
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * A streamctl procedure called without `CALL`: Spark 3.5 has no DataSource V2 procedures, so there
 * the Python helpers of a classic session call this over py4j (`python/streamctl/_procedures.py`)
 * with the arguments they would give `CALL streamctl.system.<name>(...)`, by name. It runs the same
 * [[StreamctlProcedure]] and returns its rows as a DataFrame of the procedure's result schema, as
 * `CALL` does. A parameter left out is NULL, as Spark 4.0 binds a `CALL` ([[ProcedureBinding]]).
 *
 * {{{
 * ProcedureCalls.call(spark, "describe_tasks", java.util.Map.of("checkpoint", "/chk/q1")).show()
 * }}}
 */
object ProcedureCalls {
  def call(
      session: SparkSession,
      procedure: String,
      args: java.util.Map[String, Any]
  ): DataFrame = {
    val p = StreamctlProcedures.byName.getOrElse(
      procedure,
      throw StreamctlException(
        s"No procedure $procedure: there are ${StreamctlProcedures.byName.keys.toSeq.sorted.mkString(", ")}"
      )
    )
    val given = args.asScala.toMap
    given.keys.filterNot(n => p.params.exists(_.name == n)).toSeq.sorted.headOption.foreach { n =>
      throw StreamctlException(
        s"Procedure $procedure has no parameter $n: it has ${p.params.map(_.name).mkString(", ")}"
      )
    }
    p.params.find(q => q.required && given.get(q.name).forall(_ == null)).foreach { q =>
      throw StreamctlException(s"Procedure $procedure needs argument ${q.name}")
    }
    val input = new GenericInternalRow(p.params.map(q =>
      given.get(q.name).filter(_ != null).map(internal(procedure, q, _)).orNull
    ).toArray[Any])
    val out = p.rows(input).map(r => Row.fromSeq(r.map(external)))
    session.createDataFrame(out.asJava, p.result)
  }

  private def internal(procedure: String, param: Param, value: Any): Any =
    (param.dataType, value) match {
      case (StringType, v) => UTF8String.fromString(v.toString)
      case (IntegerType, v: Number) => v.intValue
      case (LongType, v: Number) => v.longValue
      case (BooleanType, v: java.lang.Boolean) => v.booleanValue
      case (MapType(StringType, StringType, _), m: java.util.Map[_, _]) =>
        val entries = m.asScala.toSeq
        ArrayBasedMapData(
          entries.map(e => UTF8String.fromString(e._1.toString): Any).toArray,
          entries.map(e =>
            Option(e._2).map(v => UTF8String.fromString(v.toString)).orNull: Any
          ).toArray
        )
      case (t, v) => throw StreamctlException(
          s"Argument ${param.name} of procedure $procedure must be ${t.simpleString}, not ${v.getClass.getSimpleName} $v"
        )
    }

  private def external(v: Any): Any = v match {
    case Some(x) => external(x)
    case None => null
    case r: Row => Row.fromSeq(r.toSeq.map(external))
    case other => other
  }
}
