package streamctl.chooser

import streamctl.system.{Envelope, SSP}

/**
 * Decides which buffered envelope a task processes next (Samza's contract):
 *   - `register` every SSP before `start`;
 *   - `update` offers an envelope; the caller offers at most one outstanding envelope per SSP and
 *     offers the next envelope of an SSP only after the previous one was chosen;
 *   - `choose` returns the next envelope, or null when it has none it wants to give (null rather
 *     than Option: this is the per-record hot path);
 *   - an envelope is never returned twice;
 *   - an envelope is valid until the next envelope of its SSP is offered: the reader refills one
 *     envelope per SSP instead of allocating one per message, so a chooser keeps no reference to an
 *     envelope it has returned (copy what it needs, e.g. `payload`, first).
 *
 * {{{
 * val c = new RoundRobinChooser
 * c.register(ssp, 0L); c.start()
 * c.update(envelope); c.choose() // envelope
 * c.choose()                     // null
 * }}}
 */
trait MessageChooser {
  def register(ssp: SSP, offset: Long): Unit = ()
  def start(): Unit = ()
  def stop(): Unit = ()
  def update(envelope: Envelope): Unit
  def choose(): Envelope
}
