package streamctl.spark

import streamctl.system.SSP

/** Water-filling: every SSP gets an equal share of the budget; what one cannot use goes to the others. */
private[spark] object FairShare {
  def admit(start: Map[SSP, Long], heads: Map[SSP, Long], budget: Long): Map[SSP, Long] = {
    var left = budget
    var open = start.keys.toSeq.sorted.filter(s => heads(s) > start(s))
    val grant = scala.collection.mutable.Map[SSP, Long]().withDefaultValue(0L)
    while (left > 0 && open.nonEmpty) {
      val share = math.max(1L, left / open.size)
      open.foreach { s =>
        val want = heads(s) - start(s) - grant(s)
        val g = math.min(math.min(want, share), left)
        grant(s) += g
        left -= g
      }
      open = open.filter(s => heads(s) - start(s) > grant(s))
    }
    start.map { case (s, o) => s -> (o + grant(s)) }
  }
}
