package streamctl.chooser

import streamctl.system.{SSP, SystemAdmin}

/**
 * Adapts [[SystemAdmin.offsetsForTimestamps]] to the `offsetForTime(ssp, t)` function that
 * [[TimeFrontier]] and [[Admission]] take. They ask every SSP about one time before moving to the
 * next, so remembering the answer for the last time turns each probe into one request for all SSPs.
 * Not thread-safe; make one per planned batch.
 *
 * {{{
 * val index = new AdminTimeIndex(admin, backlog.keySet)
 * Admission.plan(backlog, config, bootstrapHeads, budget, index.offsetForTime)
 * }}}
 */
final class AdminTimeIndex(admin: SystemAdmin, ssps: Set[SSP]) {
  private var time = Long.MinValue
  private var answer: Map[SSP, Long] = Map.empty
  val offsetForTime: (SSP, Long) => Long = (ssp, t) => {
    if (t != time) {
      answer = admin.offsetsForTimestamps(ssps.map(_ -> t).toMap)
      time = t
    }
    answer.getOrElse(ssp, -1L)
  }
}
