package streamctl

/**
 * How the running JVM makes a [[StreamctlException]]: found with `java.util.ServiceLoader`, so that
 * the `spark` package can make them Spark errors without any package below it naming Spark (a JVM
 * without Spark's jars, like the `streamctl` command's, makes plain ones).
 *
 * {{{
 * val flavour: ExceptionFlavour = (message, cause, condition, parameters) =>
 *   new StreamctlException(message, cause, condition, parameters)
 * }}}
 */
trait ExceptionFlavour {
  def make(
      message: String,
      cause: Throwable,
      condition: String,
      parameters: Map[String, String]
  ): StreamctlException
}
