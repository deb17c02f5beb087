package streamctl.locality

import streamctl.StreamctlException

/**
 * One Spark executor, as a `SparkListener` reports it: its id and the host it runs on. Two
 * executors are the same only when both id and host match, so an id that comes back on another host
 * is treated as a new executor (its warm consumers and caches are gone).
 *
 * {{{
 * val e = ExecutorId("7", "worker-3")
 * e.location // "executor_worker-3_7": pins a task to this executor, not just to its host
 * }}}
 */
final case class ExecutorId(id: String, host: String) {
  if (id == null || id.isEmpty)
    throw StreamctlException(s"Executor id must not be empty (host '$host')")
  if (host == null || host.isEmpty)
    throw StreamctlException(s"Host of executor '$id' must not be empty")

  /**
   * Spark's executor-level preferred location. Spark reads it back by splitting at the first `_`
   * after the prefix, so a host containing `_` is misread and the preference is simply not honoured
   * (Spark's own Kafka source has the same limit); it never fails a task. Made once: every task of
   * every batch asks for it.
   */
  lazy val location: String = s"executor_${host}_$id"

  override def toString: String = s"$id@$host"
}

object ExecutorId {

  /** Only used for deterministic tie-breaks, so plain string order is enough. */
  implicit val ordering: Ordering[ExecutorId] = Ordering.by((e: ExecutorId) => (e.host, e.id))
}
