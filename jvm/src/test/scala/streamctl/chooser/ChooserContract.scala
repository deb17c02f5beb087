package streamctl.chooser

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.chooser.ChooserFixtures._
import streamctl.system.{Envelope, SSP}

/**
 * Samza's chooser contract, run against every built-in by a subclass per chooser: nothing in → null
 * out, an offered envelope comes out, no envelope comes out twice, none is lost, and each SSP's
 * envelopes keep their offset order.
 */
abstract class ChooserContract {
  val a0: SSP = ssp("a", 0)
  val a1: SSP = ssp("a", 1)
  val b0: SSP = ssp("b", 0)
  val all: Seq[SSP] = Seq(a0, a1, b0)

  /** A chooser over `all`, registered at offset 0 and started. */
  def newChooser(): MessageChooser

  @Test def nullWhenNothingOffered(): Unit = {
    val c = newChooser()
    assertNull(c.choose())
    assertNull(c.choose())
  }

  @Test def offeredEnvelopeIsChosenThenNull(): Unit = {
    val c = newChooser()
    val e = env(a1, 0, ts = 5)
    c.update(e)
    assertSame(e, c.choose())
    assertNull(c.choose())
  }

  @Test def everyEnvelopeExactlyOnceInOffsetOrderPerSsp(): Unit = {
    val input = all.zipWithIndex.flatMap { case (s, i) =>
      records(s, 50 + i * 7, ts = o => (o * 13 + i * 5) % 40)
    }
    val out = read(newChooser(), input)
    assertEquals(input.size, out.size)
    assertEquals(
      input.size,
      out.map(System.identityHashCode).distinct.size,
      "an envelope was chosen twice"
    )
    all.foreach { s =>
      val offsets = out.filter(_.ssp == s).map(_.offset)
      assertEquals(offsets.sorted, offsets, s"offsets of $s out of order")
    }
  }

  @Test def equalSspInstancesAreOneSsp(): Unit = {
    // The reader may build a new SSP object per record; ids must not depend on identity.
    val c = newChooser()
    c.update(env(SSP.kafka("a", 0), 0, ts = 1))
    val e: Envelope = c.choose()
    assertEquals(a0, e.ssp)
    c.update(env(SSP.kafka("a", 0), 1, ts = 2))
    assertEquals(1L, c.choose().offset)
    assertNull(c.choose())
  }
}

class RoundRobinContractTest extends ChooserContract {
  def newChooser(): MessageChooser = started(new RoundRobinChooser, all: _*)
}

class BatchingContractTest extends ChooserContract {
  def newChooser(): MessageChooser = started(new BatchingChooser(new RoundRobinChooser, 3), all: _*)
}

class TieredPriorityContractTest extends ChooserContract {
  def newChooser(): MessageChooser =
    started(
      new TieredPriorityChooser(s => if (s.stream == "b") 1 else 0, () => new RoundRobinChooser),
      all: _*
    )
}

class TimeAlignedContractTest extends ChooserContract {
  def newChooser(): MessageChooser = started(new TimeAlignedChooser, all: _*)
}

class BootstrappingContractTest extends ChooserContract {
  // a is bootstrapped to offset 10, so every test crosses from bootstrapping to pass-through.
  def newChooser(): MessageChooser =
    started(
      new BootstrappingChooser(new RoundRobinChooser, _.stream == "a", Map(a0 -> 10L, a1 -> 0L)),
      all: _*
    )
}

class ComposedContractTest extends ChooserContract {
  def newChooser(): MessageChooser = ChooserFactory.forTask(
    ChooserConfig.parse(
      Map(
        "chooser" -> "time-aligned",
        "chooser.batch.size" -> "2",
        "stream.a.priority" -> "3",
        "stream.a.bootstrap" -> "true"
      ),
      Seq("a", "b")
    ),
    all.map(_ -> 0L).toMap,
    Map(a0 -> 4L, a1 -> 0L)
  )
}
