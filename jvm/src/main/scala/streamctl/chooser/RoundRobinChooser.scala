package streamctl.chooser

import streamctl.system.Envelope

/**
 * Chooses envelopes in the order they were offered. With one outstanding envelope per SSP and the
 * reader offering the next envelope of an SSP right after its previous one was chosen, FIFO order
 * visits the SSPs in turn.
 */
class RoundRobinChooser extends MessageChooser {
  private val queue = new java.util.ArrayDeque[Envelope]()

  override def update(envelope: Envelope): Unit = queue.addLast(envelope)

  override def choose(): Envelope = queue.pollFirst()
}
