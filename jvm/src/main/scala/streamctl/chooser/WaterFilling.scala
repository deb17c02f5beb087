package streamctl.chooser

/**
 * Fair share of a record budget: every claimant gets the same amount, and what a small claimant
 * cannot use is shared again among the others (water-filling). When the budget does not divide
 * evenly the extra records go one each to the unsatisfied claimants in input order, beginning at
 * the `rotation`-th of them (cyclically), so equal inputs always give equal outputs. A caller whose
 * `rotation` moves from call to call (the claimants' positions) spreads the extras over all of
 * them: with a budget smaller than the number of claimants, a fixed beginning would serve the same
 * first few every time and the rest never.
 *
 * {{{
 * WaterFilling.share(Array(2L, 100L, 100L), budget = 12)               // Array(2, 5, 5)
 * WaterFilling.share(Array(2L, 100L, 100L), budget = 13)               // Array(2, 6, 5)
 * WaterFilling.share(Array(2L, 100L, 100L), budget = 13, rotation = 1) // Array(2, 5, 6)
 * }}}
 */
object WaterFilling {

  /** Per claimant, how many of its `demands` fit; the result sums to min(budget, demands.sum). */
  def share(demands: Array[Long], budget: Long, rotation: Long = 0L): Array[Long] = {
    val n = demands.length
    val granted = new Array[Long](n)
    // Smallest demands first: once one fits under the current level it is fully served.
    val bySize = {
      val order = Array.tabulate[Integer](n)(Integer.valueOf)
      // Stable, so equal demands stay in input order.
      java.util.Arrays.sort(
        order,
        (a: Integer, b: Integer) => java.lang.Long.compare(demands(a), demands(b))
      )
      order.map(_.intValue)
    }
    var remaining = math.max(0L, budget)
    var active = n
    var k = 0
    while (k < n) {
      val i = bySize(k)
      val level = remaining / active
      if (demands(i) <= level) {
        granted(i) = math.max(0L, demands(i))
        remaining -= granted(i)
        active -= 1
        k += 1
      } else {
        /* Every claimant left wants more than the level: all get it, the remainder goes in input
         * order from the rotation's. */
        val rest = bySize.drop(k).sorted
        var extra = remaining - level * active
        val first = Math.floorMod(rotation, rest.length.toLong).toInt
        var r = 0
        while (r < rest.length) {
          val j = rest((first + r) % rest.length)
          granted(j) = level + (if (extra > 0) 1 else 0)
          if (extra > 0) extra -= 1
          r += 1
        }
        k = n
      }
    }
    granted
  }
}
