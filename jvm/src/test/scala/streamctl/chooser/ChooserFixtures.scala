package streamctl.chooser

import scala.collection.mutable

import streamctl.system.{Envelope, SSP}

/** Envelopes and a reader-like driver loop for chooser tests. */
object ChooserFixtures {
  def ssp(stream: String, p: Int): SSP = SSP.kafka(stream, p)

  def env(ssp: SSP, offset: Long, ts: Long = -1L): Envelope =
    new Envelope(ssp, offset, ts, null, null)

  /** `n` envelopes of `ssp` from `from`, timestamps given by `ts(offset)`. */
  def records(ssp: SSP, n: Int, from: Long = 0L, ts: Long => Long = _ => -1L): Seq[Envelope] =
    (from until from + n).map(o => env(ssp, o, ts(o)))

  def started[C <: MessageChooser](c: C, ssps: SSP*): C = {
    ssps.foreach(c.register(_, 0L)); c.start(); c
  }

  /**
   * Reads like the task reader: one buffer per SSP, the head of each non-empty buffer offered, the
   * next envelope of an SSP offered right after its previous one was chosen. Stops when `choose()`
   * returns null; what was left unchosen stays in the buffers.
   */
  final class Reader(val chooser: MessageChooser, input: Seq[Envelope]) {
    val buffers: mutable.LinkedHashMap[SSP, mutable.Queue[Envelope]] = mutable.LinkedHashMap.empty
    input.foreach(e => buffers.getOrElseUpdate(e.ssp, mutable.Queue.empty).enqueue(e))
    private var offeredAny = false

    private def offerNext(s: SSP): Unit = buffers.get(s).foreach { q =>
      if (q.nonEmpty) chooser.update(q.dequeue())
      if (q.isEmpty) chooser match {
        // The buffer is drained: say how far the SSP was read, as the real reader does.
        case t: TaskChooser => t.advancedTo(s, input.filter(_.ssp == s).map(_.offset + 1).max)
        case _ =>
      }
    }

    /** Chooses until null; returns what was chosen in order. */
    def run(): Seq[Envelope] = {
      if (!offeredAny) { buffers.keys.toSeq.foreach(offerNext); offeredAny = true }
      val out = mutable.ArrayBuffer.empty[Envelope]
      var e = chooser.choose()
      while (e != null) { out += e; offerNext(e.ssp); e = chooser.choose() }
      out.toSeq
    }

    /** Offers more records later, as if they had just been fetched. */
    def arrive(more: Seq[Envelope]): Unit = more.foreach { e =>
      val q = buffers.getOrElseUpdate(e.ssp, mutable.Queue.empty)
      q.enqueue(e)
    }
  }

  def read(chooser: MessageChooser, input: Seq[Envelope]): Seq[Envelope] =
    new Reader(chooser, input).run()

  def streams(out: Seq[Envelope]): String = out.map(_.ssp.stream).mkString(" ")
  def sspOrder(out: Seq[Envelope]): Seq[String] = out.map(e => s"${e.ssp}@${e.offset}")
}
