package streamctl.chooser

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class WaterFillingTest {
  private def share(budget: Long, demands: Long*): Seq[Long] =
    WaterFilling.share(demands.toArray, budget).toSeq

  @Test def equalSharesWhenEveryoneWantsMore(): Unit =
    assertEquals(Seq(4L, 4L, 4L), share(12, 100, 100, 100))

  @Test def unusedShareIsRedistributed(): Unit =
    assertEquals(Seq(2L, 5L, 5L, 0L), share(12, 2, 100, 100, 0))

  @Test def remainderGoesInInputOrder(): Unit = {
    assertEquals(Seq(5L, 4L, 4L), share(13, 100, 100, 100))
    assertEquals(Seq(1L, 6L, 6L), share(13, 1, 100, 100))
  }

  @Test def theRemainderBeginsAtTheRotation(): Unit = {
    assertEquals(
      Seq(4L, 5L, 4L),
      WaterFilling.share(Array(100L, 100L, 100L), 13, rotation = 1).toSeq
    )
    assertEquals(
      Seq(5L, 4L, 4L),
      WaterFilling.share(Array(100L, 100L, 100L), 13, rotation = 3).toSeq
    )
    assertEquals(Seq(1L, 6L, 6L), WaterFilling.share(Array(1L, 100L, 100L), 13, rotation = 1).toSeq)
    assertEquals(
      Seq(0L, 1L, 1L),
      WaterFilling.share(Array(100L, 100L, 100L), 2, rotation = 1).toSeq
    )
  }

  @Test def everythingWhenItFits(): Unit = assertEquals(Seq(3L, 7L), share(100, 3, 7))

  @Test def nothingFromNothing(): Unit = {
    assertEquals(Seq(0L, 0L), share(0, 3, 7))
    assertEquals(Seq.empty[Long], share(10))
  }

  @Test def sumsToTheBudgetAndNeverExceedsADemand(): Unit = {
    val rnd = new scala.util.Random(7)
    (1 to 500).foreach { _ =>
      val demands = Array.fill(1 + rnd.nextInt(12))(rnd.nextInt(50).toLong)
      val budget = rnd.nextInt(300).toLong
      val got = WaterFilling.share(demands, budget)
      assertEquals(math.min(budget, demands.sum), got.sum)
      demands.indices.foreach(i => assertTrue(got(i) <= demands(i) && got(i) >= 0))
      // Fair: nobody unsatisfied gets more than one record less than anybody else.
      val unsatisfied = demands.indices.filter(i => got(i) < demands(i))
      if (unsatisfied.nonEmpty) assertTrue(got.max - unsatisfied.map(got(_)).min <= 1)
    }
  }
}
