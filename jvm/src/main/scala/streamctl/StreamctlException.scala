package streamctl

/**
 * An error a user can act on. The message always names the thing that is wrong
 * (option, stream, partition, offset, key), so it reads well even without the stack trace.
 */
class StreamctlException(message: String, cause: Throwable = null) extends RuntimeException(message, cause)

object StreamctlException {
  def apply(message: String): StreamctlException = new StreamctlException(message)
  def apply(message: String, cause: Throwable): StreamctlException = new StreamctlException(message, cause)
}
