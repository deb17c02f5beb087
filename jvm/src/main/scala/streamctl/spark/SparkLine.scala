package streamctl.spark

import streamctl.StreamctlException

/**
 * The Spark line this jar was compiled for, checked against the Spark it runs on when a query first
 * uses `format("streamctl")`. The lines differ in Spark's own classes (real-time mode's reader, the
 * internals read through `SparkInternals`), so a jar of another line does not fail at once: it
 * reads nothing of Spark's internals and skips the checks built on them, or fails a real-time
 * reader later with a bare `AbstractMethodError`. Saying so up front names the fix.
 *
 * {{{
 * SparkLine.mismatch(built = "4.0.4", running = "4.1.3")  // Some("This streamctl jar was built for Spark 4.0 ...")
 * SparkLine.mismatch(built = "4.3.0", running = "4.3.1")  // None
 * }}}
 */
object SparkLine {

  /** `major.minor` of a Spark version (`4.0.0-preview2` and `3.5.1-databricks` included). */
  def of(version: String): String = version.split("[.-]").take(2).mkString(".")

  /**
   * The error for a jar built against `built` running on Spark `running`, if their lines differ.
   */
  def mismatch(built: String, running: String): Option[String] =
    if (of(built) == of(running)) None
    else Some(
      s"This streamctl jar was built for Spark ${of(built)}, but it runs on Spark $running: use the " +
        s"streamctl-spark${of(running)} jar (`streamctl jars --spark-version $running` names it; " +
        "streamctl.configure_spark(builder) picks it for the pyspark it runs in)"
    )

  private lazy val built: Option[String] =
    Option(getClass.getResourceAsStream("/streamctl/spark-line.properties")).map { in =>
      val p = new java.util.Properties()
      try p.load(in)
      finally in.close()
      p.getProperty("spark.version")
    }.filter(v => v != null && !v.startsWith("$"))

  private lazy val checked: Option[String] =
    built.flatMap(mismatch(_, org.apache.spark.SPARK_VERSION))

  /** Fails naming both lines when the jar is not the running Spark's line's. */
  def check(): Unit = checked.foreach(m => throw StreamctlException(m))
}
