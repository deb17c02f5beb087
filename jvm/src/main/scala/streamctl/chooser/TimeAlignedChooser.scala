package streamctl.chooser

import streamctl.StreamctlException
import streamctl.system.{Envelope, SSP}

/**
 * Chooses the offered envelope with the smallest timestamp; equal timestamps go in SSP order
 * (system, stream, partition), so the merge is deterministic across replays.
 *
 * Records without a timestamp (Kafka CreateTime -1) cannot be placed in time. They are treated as
 * older than every timestamped record: chosen as soon as they are offered. That never blocks a task
 * and agrees with the admission side, where Kafka's offsets-for-times also sees them as older than
 * any time. Give records timestamps if alignment matters for them.
 *
 * Cost is O(log n) per envelope: a binary min-heap of SSP ids over arrays, with no allocation per
 * envelope.
 *
 * {{{
 * val c = new TimeAlignedChooser
 * c.register(a, 0); c.register(b, 0); c.start()
 * c.update(envelopeOfA(ts = 20)); c.update(envelopeOfB(ts = 10))
 * c.choose() // b's envelope
 * }}}
 */
final class TimeAlignedChooser extends MessageChooser {
  private val index = new SspIndex
  private var rank: Array[Int] = _ // position of each SSP id in SSP order
  private var offered: Array[Envelope] = _ // outstanding envelope per SSP id
  private var stamp: Array[Long] = _ // its timestamp, read without a pointer chase
  private var heap: Array[Int] = _ // SSP ids, min-heap on (stamp, rank)
  private var size = 0

  override def register(ssp: SSP, offset: Long): Unit = {
    if (heap != null)
      throw StreamctlException(s"TimeAlignedChooser: SSP ${ssp.key} registered after start")
    index.add(ssp)
  }

  override def start(): Unit = {
    val n = index.size
    val byOrder = Array.tabulate(n)(index.ssp).sorted
    rank = new Array[Int](n)
    var i = 0
    while (i < n) { rank(index.idOf(byOrder(i))) = i; i += 1 }
    offered = new Array[Envelope](n)
    stamp = new Array[Long](n)
    heap = new Array[Int](n)
  }

  override def update(envelope: Envelope): Unit = {
    if (heap == null) throw StreamctlException("TimeAlignedChooser: update before start")
    val id = index.require(envelope.ssp, "TimeAlignedChooser")
    if (offered(id) != null)
      throw StreamctlException(
        s"TimeAlignedChooser: a second envelope of ${envelope.ssp.key} (offset ${envelope.offset}) " +
          s"was offered while offset ${offered(id).offset} was still outstanding"
      )
    offered(id) = envelope
    stamp(id) = envelope.timestamp
    siftUp(size, id)
    size += 1
  }

  override def choose(): Envelope = {
    if (size == 0) return null
    val top = heap(0)
    size -= 1
    if (size > 0) siftDown(0, heap(size))
    val e = offered(top)
    offered(top) = null
    e
  }

  private def before(a: Int, b: Int): Boolean = {
    val ta = stamp(a); val tb = stamp(b)
    ta < tb || (ta == tb && rank(a) < rank(b))
  }

  private def siftUp(from: Int, id: Int): Unit = {
    var i = from
    while (i > 0) {
      val parent = (i - 1) >>> 1
      val p = heap(parent)
      if (!before(id, p)) { heap(i) = id; return }
      heap(i) = p
      i = parent
    }
    heap(i) = id
  }

  private def siftDown(from: Int, id: Int): Unit = {
    var i = from
    val half = size >>> 1
    while (i < half) {
      var child = 2 * i + 1
      val right = child + 1
      if (right < size && before(heap(right), heap(child))) child = right
      val c = heap(child)
      if (!before(c, id)) { heap(i) = id; return }
      heap(i) = c
      i = child
    }
    heap(i) = id
  }
}
