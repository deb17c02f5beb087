package streamctl.spark

import scala.jdk.CollectionConverters._

import streamctl.{ExceptionFlavour, StreamctlException}

/**
 * A [[StreamctlException]] that is also a Spark error: what `StreamctlException(...)` makes in a
 * JVM that runs Spark (its companion's `Flavour`), so PySpark, classic and over Spark Connect,
 * reads its condition with `getCondition()` (`getErrorClass()` on 3.5; the line's
 * [[StreamctlThrowable]]).
 *
 * {{{
 * val e = new SparkStreamctlException("Option 'subscribe' names no stream", null,
 *   StreamctlException.Error, Map.empty)
 * assert(e.getCondition == StreamctlException.Error)
 * }}}
 */
final class SparkStreamctlException(
    message: String,
    cause: Throwable,
    condition: String,
    parameters: Map[String, String]
) extends StreamctlException(message, cause, condition, parameters) with StreamctlThrowable {
  override def getMessageParameters: java.util.Map[String, String] = parameters.asJava
  // Not from Spark's error-class registry (which does not know streamctl's conditions).
  override def getSqlState: String = null
}

object SparkStreamctlException {

  /**
   * Listed in `META-INF/services/streamctl.ExceptionFlavour`: where Spark's jars are there to link
   * it, `StreamctlException(...)` makes [[SparkStreamctlException]]s.
   */
  final class Flavour extends ExceptionFlavour {
    def make(
        message: String,
        cause: Throwable,
        condition: String,
        parameters: Map[String, String]
    ): StreamctlException = new SparkStreamctlException(message, cause, condition, parameters)
  }
}
