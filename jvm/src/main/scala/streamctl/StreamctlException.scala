package streamctl

import java.util.{ServiceConfigurationError, ServiceLoader}

/**
 * An error a user can act on. The message always names the thing that is wrong (option, stream,
 * partition, offset, key), so it reads well even without the stack trace.
 *
 * It reaches Python as a Spark error, in a classic session and over Spark Connect alike: as an
 * `IllegalArgumentException` it is one of the JVM classes PySpark converts (to
 * `pyspark.errors.IllegalArgumentException`, message first, no Py4J wrapping), and in a JVM that
 * runs Spark the companion's constructors make it a `SparkThrowable` as well (the
 * [[ExceptionFlavour]] the `spark` package provides), which carries its `condition` to
 * `e.getCondition()`. Elsewhere (the `streamctl` command's JVM) it is this class alone and needs
 * none of Spark's jars.
 *
 * {{{
 * throw StreamctlException(s"Stream 'orders' does not exist on Kafka (option 'subscribe')")
 * }}}
 */
class StreamctlException(
    message: String,
    cause: Throwable = null,
    val condition: String = StreamctlException.Error,
    val parameters: Map[String, String] = Map.empty
) extends IllegalArgumentException(message, cause)

object StreamctlException {

  /** Any streamctl error without a more specific condition. */
  val Error = "STREAMCTL_ERROR"

  def apply(message: String): StreamctlException = apply(message, null)
  def apply(message: String, cause: Throwable): StreamctlException =
    apply(message, cause, Error, Map.empty)
  def apply(
      message: String,
      cause: Throwable,
      condition: String,
      parameters: Map[String, String]
  ): StreamctlException = flavour.make(message, cause, condition, parameters)

  /**
   * The streamctl error in `t`'s cause chain, if any: what a job failed on in an executor reaches
   * the driver wrapped (e.g. in "Job aborted due to stage failure"), and the user's fix is in ours.
   */
  def in(t: Throwable): Option[StreamctlException] =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(20).collectFirst {
      case e: StreamctlException => e
    }

  private object Plain extends ExceptionFlavour {
    def make(
        message: String,
        cause: Throwable,
        condition: String,
        parameters: Map[String, String]
    ): StreamctlException = new StreamctlException(message, cause, condition, parameters)
  }

  /* The jar always lists the spark package's flavour; without Spark's jars it cannot link (its
   * class implements SparkThrowable), which shows at loading or, as the JVM verifies lazily, at its
   * first error: so one is made here, once, and a flavour that cannot link leaves the plain one. */
  private lazy val flavour: ExceptionFlavour =
    try {
      val found =
        ServiceLoader.load(classOf[ExceptionFlavour], classOf[ExceptionFlavour].getClassLoader)
          .iterator()
      if (!found.hasNext) Plain
      else {
        val spark = found.next()
        spark.make("linked", null, Error, Map.empty)
        spark
      }
    } catch { case _: ServiceConfigurationError | _: LinkageError => Plain }
}
