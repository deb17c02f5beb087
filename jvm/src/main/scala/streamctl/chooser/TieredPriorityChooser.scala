package streamctl.chooser

import streamctl.StreamctlException
import streamctl.system.{Envelope, SSP}

/**
 * Chooses from the highest priority tier that has an envelope; SSPs of one tier share it through
 * their own chooser (`newTier()`, round-robin by default). A lower tier starves while a higher one
 * has envelopes, on purpose: that is what lets a live stream overtake a backfill under one budget.
 *
 * {{{
 * val c = new TieredPriorityChooser(ssp => if (ssp.stream == "live") 10 else 0, () => new RoundRobinChooser)
 * // live envelopes are always chosen before backfill envelopes
 * }}}
 *
 * @param priorityOf
 *   priority of an SSP, higher first (`stream.<name>.priority`, default 0)
 * @param newTier
 *   makes the chooser of one tier; called once per distinct priority
 */
final class TieredPriorityChooser(priorityOf: SSP => Int, newTier: () => MessageChooser)
    extends MessageChooser {
  private val index = new SspIndex
  // Before start: tier per priority. After start: tiers sorted, highest first.
  private val tierOfPriority = new java.util.TreeMap[Integer, Integer]()
  private val pendingTiers = new java.util.ArrayList[MessageChooser]()
  private var tierOfSsp = new Array[Int](8)
  private var tiers: Array[MessageChooser] = _
  private var pending: Array[Int] = _ // outstanding envelopes per tier
  private var started = false

  override def register(ssp: SSP, offset: Long): Unit = {
    if (started)
      throw StreamctlException(s"TieredPriorityChooser: SSP ${ssp.key} registered after start")
    val id = index.add(ssp)
    val p = priorityOf(ssp)
    var t = tierOfPriority.get(p)
    if (t == null) {
      t = pendingTiers.size
      tierOfPriority.put(p, t)
      pendingTiers.add(newTier())
    }
    if (id >= tierOfSsp.length) tierOfSsp = java.util.Arrays.copyOf(tierOfSsp, tierOfSsp.length * 2)
    tierOfSsp(id) = t
    pendingTiers.get(t).register(ssp, offset)
  }

  override def start(): Unit = {
    // Renumber tiers so that position 0 is the highest priority: choose() then scans upward.
    val order = tierOfPriority.descendingMap().values().toArray(new Array[Integer](0))
    val rank = new Array[Int](order.length)
    tiers = new Array[MessageChooser](order.length)
    var i = 0
    while (i < order.length) { rank(order(i)) = i; tiers(i) = pendingTiers.get(order(i)); i += 1 }
    i = 0
    while (i < index.size) { tierOfSsp(i) = rank(tierOfSsp(i)); i += 1 }
    pending = new Array[Int](tiers.length)
    started = true
    tiers.foreach(_.start())
  }

  override def stop(): Unit = if (tiers != null) tiers.foreach(_.stop())

  override def update(envelope: Envelope): Unit = {
    if (!started) throw StreamctlException("TieredPriorityChooser: update before start")
    val t = tierOfSsp(index.require(envelope.ssp, "TieredPriorityChooser"))
    pending(t) += 1
    tiers(t).update(envelope)
  }

  override def choose(): Envelope = {
    var t = 0
    while (t < tiers.length) {
      if (pending(t) > 0) {
        val e = tiers(t).choose()
        if (e != null) { pending(t) -= 1; return e }
        // A tier chooser may decline (a user chooser waiting for more); lower tiers may go.
      }
      t += 1
    }
    null
  }
}
