package streamctl.system

/**
 * Turns a raw record of an SSP into the envelope the task sees, or null to drop it
 * (a control message consumed by the decoder). Plain streams pass records through;
 * intermediate streams strip their framing.
 */
trait EnvelopeDecoder {
  def decode(envelope: Envelope): Envelope
}

object EnvelopeDecoder {
  val Identity: EnvelopeDecoder = (e: Envelope) => e
}
