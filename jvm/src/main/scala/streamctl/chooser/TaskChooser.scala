package streamctl.chooser

import streamctl.system.{Envelope, SSP}

/**
 * The chooser a task's reader talks to: the composed chain built by [[ChooserFactory]],
 * already registered and started, plus what the reader needs beyond `update`/`choose`.
 *
 * Reader loop, one buffer per SSP:
 * {{{
 * val c = ChooserFactory.forTask(config, startOffsets, bootstrapHeads)
 * // offer the first buffered envelope of every SSP with data
 * var e = c.choose()
 * while (e != null || c.outstanding > 0 || moreToRead) {
 *   if (e != null) { emit(e); offerNextOf(e.ssp) }             // then c.advancedTo(...) if drained
 *   else if (c.waitingFor.nonEmpty) fetchAndOffer(c.waitingFor) // bootstrap needs these first
 *   else fetchAndOfferAnything()
 *   e = c.choose()
 * }
 * }}}
 * A `null` from `choose()` with `waitingFor` empty and nothing left to fetch while
 * `outstanding > 0` means the chooser (a user's) is holding envelopes it will never give:
 * fail the task rather than commit offsets past them.
 */
final class TaskChooser private[chooser] (root: MessageChooser, bootstrap: BootstrappingChooser) extends MessageChooser {
  private var out = 0

  override def register(ssp: SSP, offset: Long): Unit = root.register(ssp, offset)
  override def start(): Unit = root.start()
  override def stop(): Unit = root.stop()

  override def update(envelope: Envelope): Unit = {
    out += 1
    root.update(envelope)
  }

  override def choose(): Envelope = {
    val e = root.choose()
    if (e != null) out -= 1
    e
  }

  /** Envelopes offered and not chosen yet. */
  def outstanding: Int = out

  /** True while some bootstrap SSP of the task is behind its start-time head. */
  def isBootstrapping: Boolean = bootstrap != null && bootstrap.isBootstrapping

  /** Bootstrap SSPs the task is blocked on; see [[BootstrappingChooser.waitingFor]]. */
  def waitingFor: Seq[SSP] = if (bootstrap == null) Nil else bootstrap.waitingFor

  /** Progress without envelopes; see [[BootstrappingChooser.advancedTo]]. Cheap to call for any SSP. */
  def advancedTo(ssp: SSP, nextOffset: Long): Unit = if (bootstrap != null) bootstrap.advancedTo(ssp, nextOffset)
}
