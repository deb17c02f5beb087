package streamctl.control

/** Why a source's inputs ended. */
sealed trait InputsEnded

object InputsEnded {

  /** Every SSP of the source is an intermediate SSP at end-of-stream. */
  case object EndOfStream extends InputsEnded {
    override def toString = "end-of-stream on every input SSP"
  }

  /** A `Trigger.AvailableNow` run read everything up to its target. */
  case object AvailableNow extends InputsEnded {
    override def toString = "Trigger.AvailableNow reached its target"
  }

  /** `streamctl.end_of_stream(query)`. */
  case object Requested extends InputsEnded { override def toString = "end_of_stream() was called" }
}
