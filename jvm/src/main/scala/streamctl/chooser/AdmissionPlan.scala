package streamctl.chooser

import streamctl.system.SSP

/**
 * End offset (exclusive) per SSP for one batch.
 *
 * @param bootstrapping
 *   true when the batch only reads bootstrap SSPs, because one of them was still behind its
 *   start-time head when it was planned
 * @param frontier
 *   for time-aligned planning, the event time T such that every SSP is read at least up to its
 *   first record stamped >= T
 */
final case class AdmissionPlan(
    ends: Map[SSP, Long],
    bootstrapping: Boolean,
    frontier: Option[Long]
) {
  def admitted(backlog: Map[SSP, SspBacklog]): Long = ends.iterator.map { case (s, e) =>
    e - backlog(s).start
  }.sum
}
