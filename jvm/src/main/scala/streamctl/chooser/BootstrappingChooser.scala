package streamctl.chooser

import streamctl.StreamctlException
import streamctl.system.{Envelope, SSP}

/**
 * Holds back every envelope of a non-bootstrap SSP until each bootstrap SSP of the task has been
 * read up to `heads(ssp)`, the head it had when the query started (records that arrive later do not
 * move it). A bootstrap SSP whose start offset is already at or past its head (an empty partition,
 * or a restart after bootstrap) counts as caught up at once. Once all are caught up this chooser is
 * a pass-through to `wrapped`.
 *
 * Bootstrap envelopes go straight to `wrapped` (so priorities and batching still order them);
 * held-back envelopes enter `wrapped` in SSP-registration order the moment the last bootstrap SSP
 * catches up.
 *
 * '''Talking with the reader.''' While bootstrapping, `choose()` returns null when `wrapped` has no
 * bootstrap envelope, even if non-bootstrap envelopes are held: the task must wait. [[waitingFor]]
 * names the bootstrap SSPs that are behind and have no envelope offered: the reader must fetch from
 * those. Because a record consumed without an envelope (a control message, a transaction marker, a
 * compaction gap, the end of the batch's range) can hide the last offset before the head, the
 * reader reports such progress with [[advancedTo]].
 *
 * {{{
 * val c = new BootstrappingChooser(new RoundRobinChooser, _.stream == "currency", Map(cur0 -> 2L))
 * c.register(cur0, 0L); c.register(tx0, 0L); c.start()
 * c.update(tx); c.choose()             // null: currency-0 is behind
 * c.waitingFor                         // Seq(currency-0)
 * c.update(cur@0); c.choose()          // cur@0
 * c.update(cur@1); c.choose()          // cur@1, currency-0 reached its head 2
 * c.choose()                           // tx
 * }}}
 *
 * @param isBootstrap
 *   whether an SSP belongs to a bootstrap stream
 * @param heads
 *   start-time head (next offset) of every bootstrap SSP of the task
 */
final class BootstrappingChooser(
    wrapped: MessageChooser,
    isBootstrap: SSP => Boolean,
    heads: collection.Map[SSP, Long]
) extends MessageChooser {
  private val index = new SspIndex
  private var bootstrap = new Array[Boolean](8)
  private var head = new Array[Long](8)
  private var lagging = new Array[Boolean](8)
  private var offered = new Array[Boolean](8) // a bootstrap envelope is outstanding in `wrapped`
  private var reached = new Array[Long](8) // highest position reported by advancedTo
  private var held = new Array[Envelope](8) // non-bootstrap envelope kept back
  private var laggingCount = 0
  private var started = false

  override def register(ssp: SSP, offset: Long): Unit = {
    if (started)
      throw StreamctlException(s"BootstrappingChooser: SSP ${ssp.key} registered after start")
    val id = index.add(ssp)
    if (id >= bootstrap.length) grow()
    if (isBootstrap(ssp)) {
      val h = heads.getOrElse(
        ssp,
        throw StreamctlException(
          s"Bootstrap SSP ${ssp.key} has no start-time head offset; the planner must record one"
        )
      )
      if (!bootstrap(id) && offset < h) laggingCount += 1
      bootstrap(id) = true
      head(id) = h
      lagging(id) = offset < h
      reached(id) = offset
    }
    wrapped.register(ssp, offset)
  }

  override def start(): Unit = { started = true; wrapped.start() }
  override def stop(): Unit = wrapped.stop()

  /** True until every bootstrap SSP of the task reached its start-time head. */
  def isBootstrapping: Boolean = laggingCount > 0

  /**
   * Bootstrap SSPs that are behind their head and have no envelope offered: while this is non-empty
   * and `choose()` returns null, the task cannot progress until the reader offers an envelope of
   * one of them (or reports [[advancedTo]]). Allocates; call it only after `choose()` returned
   * null.
   */
  def waitingFor: Seq[SSP] =
    if (laggingCount == 0) Nil
    else (0 until index.size).filter(id => lagging(id) && !offered(id)).map(index.ssp)

  /**
   * The reader has offered every envelope of `ssp` below `nextOffset` and will offer none below it:
   * records it consumed without offering (control messages, transaction markers, compaction gaps)
   * or the end of its range. Call it only once the SSP's buffer holds nothing below `nextOffset`.
   * Lets a bootstrap SSP catch up when its last offsets carry no envelope. Other SSPs are ignored.
   */
  def advancedTo(ssp: SSP, nextOffset: Long): Unit = {
    if (laggingCount == 0) return
    val id = index.idOf(ssp)
    if (id < 0 || !lagging(id)) return
    if (nextOffset > reached(id)) reached(id) = nextOffset
    if (!offered(id) && reached(id) >= head(id)) caughtUp(id)
  }

  override def update(envelope: Envelope): Unit = {
    if (laggingCount == 0) { wrapped.update(envelope); return }
    val id = index.require(envelope.ssp, "BootstrappingChooser")
    if (bootstrap(id)) {
      offered(id) = true
      wrapped.update(envelope)
    } else {
      if (held(id) != null)
        throw StreamctlException(
          s"BootstrappingChooser: a second envelope of ${envelope.ssp.key} (offset ${envelope.offset}) " +
            s"was offered while offset ${held(id).offset} was still outstanding"
        )
      held(id) = envelope
    }
  }

  override def choose(): Envelope = {
    if (laggingCount == 0) return wrapped.choose()
    val e = wrapped.choose()
    if (e != null) {
      val id = index.require(e.ssp, "BootstrappingChooser (from its wrapped chooser)")
      offered(id) = false
      if (lagging(id) && (e.offset + 1 >= head(id) || reached(id) >= head(id))) caughtUp(id)
    }
    e
  }

  private def caughtUp(id: Int): Unit = {
    lagging(id) = false
    laggingCount -= 1
    if (laggingCount == 0) {
      var i = 0
      while (i < index.size) {
        val h = held(i)
        if (h != null) { held(i) = null; wrapped.update(h) }
        i += 1
      }
    }
  }

  private def grow(): Unit = {
    val n = bootstrap.length * 2
    bootstrap = java.util.Arrays.copyOf(bootstrap, n)
    head = java.util.Arrays.copyOf(head, n)
    lagging = java.util.Arrays.copyOf(lagging, n)
    offered = java.util.Arrays.copyOf(offered, n)
    reached = java.util.Arrays.copyOf(reached, n)
    held = java.util.Arrays.copyOf(held, n)
  }
}
