package streamctl.chooser

import streamctl.StreamctlException
import streamctl.system.{Envelope, SSP}

/**
 * Keeps choosing the SSP it chose last, up to `batchSize` envelopes in a row, as long as that SSP
 * has an envelope offered; then hands the decision back to `wrapped`. Reading runs of one partition
 * keeps the consumer's fetch buffers and the user's per-key state warm (Samza's
 * `task.consumer.batch.size`).
 *
 * The envelope of the batched SSP is held here, never offered to `wrapped`, so `wrapped` sees at
 * most one outstanding envelope per SSP like any chooser.
 *
 * {{{
 * val c = new BatchingChooser(new RoundRobinChooser, batchSize = 3)
 * // with a and b always offered: a a a b b b a a a ...
 * }}}
 */
final class BatchingChooser(wrapped: MessageChooser, batchSize: Int) extends MessageChooser {
  if (batchSize <= 0) throw StreamctlException(s"chooser.batch.size must be > 0, got $batchSize")

  private var current: SSP = _ // SSP of the running streak, null when none
  private var streak = 0 // envelopes chosen in a row from `current`
  private var held: Envelope = _ // next envelope of `current`, kept out of `wrapped`

  override def register(ssp: SSP, offset: Long): Unit = wrapped.register(ssp, offset)
  override def start(): Unit = wrapped.start()
  override def stop(): Unit = wrapped.stop()

  override def update(envelope: Envelope): Unit =
    if (held == null && streak < batchSize && envelope.ssp == current) held = envelope
    else wrapped.update(envelope)

  override def choose(): Envelope = {
    val h = held
    if (h != null) {
      held = null
      streak += 1
      return h
    }
    val e = wrapped.choose()
    if (e != null) {
      current = e.ssp
      streak = 1
    } else {
      // Nothing offered at all: a later envelope of the old SSP starts a fresh decision.
      current = null
      streak = 0
    }
    e
  }
}
