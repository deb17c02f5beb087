package streamctl.chooser

import streamctl.StreamctlException
import streamctl.system.{Envelope, EnvelopeOrder}

/**
 * The chooser of a task that reads one SSP with the built-in choosers: every built-in chain,
 * whatever its options, can only hand back the one outstanding envelope, so this holds it in a
 * field. It keeps the most common task shape (one Kafka partition) free of queues and of a chain of
 * chooser calls per record. [[ChooserFactory.forReader]] picks it.
 *
 * {{{
 * val c = new SingleSspChooser
 * c.update(envelope); c.choose()   // envelope
 * c.choose()                       // null
 * }}}
 */
final class SingleSspChooser extends MessageChooser with EnvelopeOrder {
  private var slot: Envelope = _

  override def update(envelope: Envelope): Unit = {
    if (slot != null) throw StreamctlException(
      s"SingleSspChooser: a second envelope of ${envelope.ssp.key} " +
        s"(offset ${envelope.offset}) was offered while offset ${slot.offset} was still outstanding"
    )
    slot = envelope
  }

  override def choose(): Envelope = {
    val e = slot
    slot = null
    e
  }
}
