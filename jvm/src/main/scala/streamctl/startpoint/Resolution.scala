package streamctl.startpoint

import streamctl.system.SSP

/**
 * The offset a startpoint resolved to for one SSP.
 *
 * `beyondData` is true when a timestamp startpoint found no message at or after its time (a future
 * timestamp, or an empty partition) and so resolved to the end: callers say so rather than let a
 * user wonder why nothing was re-read.
 *
 * {{{
 * r.offset   // 120
 * r.describe // "orders-3: timestamp 2030-01-01T00:00:00Z -> offset 120 (end of the partition: no message at or after that time)"
 * }}}
 */
final case class Resolution(ssp: SSP, startpoint: Startpoint, offset: Long, beyondData: Boolean) {
  def describe: String = {
    val note = if (beyondData) " (end of the partition: no message at or after that time)" else ""
    s"$ssp: ${startpoint.describe} -> offset $offset$note"
  }
}
