package streamctl.control

import streamctl.StreamctlException
import streamctl.system.SSP

/**
 * Every control error names the stream, partition and (when one applies) offset, so it is
 * actionable alone.
 */
private[control] object ControlErrors {
  def where(ssp: SSP, offset: Long): String =
    s"stream '${ssp.stream}' partition ${ssp.partition} offset $offset"

  def where(ssp: SSP): String = s"stream '${ssp.stream}' partition ${ssp.partition}"

  def at(ssp: SSP, offset: Long, problem: String, cause: Throwable = null): StreamctlException =
    StreamctlException(s"Intermediate ${where(ssp, offset)}: $problem", cause)
}
