package streamctl

import scala.jdk.CollectionConverters._

/**
 * An error a user can act on. The message always names the thing that is wrong (option, stream,
 * partition, offset, key), so it reads well even without the stack trace.
 *
 * It reaches Python as a Spark error, in a classic session and over Spark Connect alike: as an
 * `IllegalArgumentException` it is one of the JVM classes PySpark converts (to
 * `pyspark.errors.IllegalArgumentException`, message first, no Py4J wrapping), and as a
 * `SparkThrowable` it carries its condition (`STREAMCTL_ERROR`) to `e.getCondition()`. Its message
 * is its own text: no Spark error-class template is involved.
 *
 * {{{
 * throw StreamctlException(s"Stream 'orders' does not exist on Kafka (option 'subscribe')")
 * }}}
 */
class StreamctlException(
    message: String,
    cause: Throwable = null,
    val condition: String = StreamctlException.Error,
    parameters: Map[String, String] = Map.empty
) extends IllegalArgumentException(message, cause) with StreamctlThrowable {

  /* getCondition (and the message template where Spark has one): the Spark line's
   * StreamctlThrowable. */
  override def getMessageParameters: java.util.Map[String, String] = parameters.asJava
  // Not from Spark's error-class registry (which does not know streamctl's conditions).
  override def getSqlState: String = null
}

object StreamctlException {

  /** Any streamctl error without a more specific condition. */
  val Error = "STREAMCTL_ERROR"

  def apply(message: String): StreamctlException = new StreamctlException(message)
  def apply(message: String, cause: Throwable): StreamctlException =
    new StreamctlException(message, cause)

  /**
   * The streamctl error in `t`'s cause chain, if any: what a job failed on in an executor reaches
   * the driver wrapped (e.g. in "Job aborted due to stage failure"), and the user's fix is in ours.
   */
  def in(t: Throwable): Option[StreamctlException] =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(20).collectFirst {
      case e: StreamctlException => e
    }
}
