package streamctl.system

import streamctl.StreamctlException

/**
 * How long one phase of a query waits for Kafka before it gives up, and the option that sets that
 * wait. Every "the broker did not answer" error is built here, so each names the servers, what was
 * being done, how long it waited and the option to change, in one wording whatever the phase
 * (planning on the driver, reading, writing, control-message sends).
 *
 * {{{
 * val wait = BrokerWait("127.0.0.1:9092", 60000, "kafka.default.api.timeout.ms")
 * throw wait.exceeded("listing offsets of orders-0")
 * }}}
 */
final case class BrokerWait(servers: String, ms: Long, option: String) {
  def exceeded(what: String, cause: Throwable = null): StreamctlException = {
    val detail = Option(cause).flatMap(c => Option(c.getMessage)).fold("")(m => s": $m")
    StreamctlException(
      s"Kafka at $servers did not answer within $ms ms while $what$detail " +
        s"(is the broker up? check option 'kafka.bootstrap.servers'; option '$option' sets this wait)",
      cause
    )
  }
}
