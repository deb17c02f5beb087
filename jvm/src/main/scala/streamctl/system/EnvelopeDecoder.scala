package streamctl.system

/**
 * The step between reading a record and offering it to the chooser: `accept` looks at the envelope
 * just filled with a record of its SSP and says whether it goes on. Plain streams pass every
 * record; an intermediate stream's decoder (`control.TaskControlReader`) moves the value past the
 * framing byte of a user message, and consumes a control message (false). It works in place: no
 * allocation per record.
 */
trait EnvelopeDecoder {
  def accept(envelope: Envelope): Boolean
}

object EnvelopeDecoder {
  val Identity: EnvelopeDecoder = (_: Envelope) => true
}
