package streamctl.chooser

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.chooser.ChooserFixtures._
import streamctl.system.SSP

class BootstrappingChooserTest {
  private val cur0 = ssp("currency", 0); private val cur1 = ssp("currency", 1);
  private val tx0 = ssp("tx", 0)
  private val config =
    ChooserConfig.parse(Map("stream.currency.bootstrap" -> "true"), Seq("currency", "tx"))

  private def task(heads: Map[SSP, Long], starts: Map[SSP, Long] = Map.empty): TaskChooser =
    ChooserFactory.forTask(
      config,
      Seq(cur0, cur1, tx0).map(s => s -> starts.getOrElse(s, 0L)).toMap,
      heads
    )

  @Test def everyBootstrapRecordBeforeTheFirstOtherRecord(): Unit = {
    val out = read(
      task(Map(cur0 -> 3L, cur1 -> 2L)),
      records(tx0, 4) ++ records(cur0, 3) ++ records(cur1, 2)
    )
    assertEquals("currency currency currency currency currency tx tx tx tx", streams(out))
  }

  @Test def anEmptyBootstrapPartitionCountsAsCaughtUp(): Unit = {
    // currency-1 is empty: head 0 at start 0. Only currency-0 must be read first.
    val c = task(Map(cur0 -> 2L, cur1 -> 0L))
    val out = read(c, records(tx0, 2) ++ records(cur0, 2))
    assertEquals("currency currency tx tx", streams(out))
    assertFalse(c.isBootstrapping)
  }

  @Test def aPartitionStartingAtItsHeadCountsAsCaughtUp(): Unit = {
    // A restart after bootstrap: starts already at the heads, nothing is held.
    val c = task(Map(cur0 -> 5L, cur1 -> 2L), starts = Map(cur0 -> 5L, cur1 -> 9L))
    assertFalse(c.isBootstrapping)
    c.update(env(tx0, 0))
    assertEquals(tx0, c.choose().ssp)
  }

  @Test def recordsArrivingAfterStartDoNotExtendTheHead(): Unit = {
    // currency-0 had head 3 at start; offsets 3.. were written later and are ordinary records.
    val c = task(Map(cur0 -> 3L, cur1 -> 0L))
    val out = read(c, records(cur0, 6) ++ records(tx0, 3))
    assertEquals(
      Seq(
        "currency-0@0",
        "currency-0@1",
        "currency-0@2",
        "tx-0@0",
        "currency-0@3",
        "tx-0@1",
        "currency-0@4",
        "tx-0@2",
        "currency-0@5"
      ),
      sspOrder(out)
    )
  }

  @Test def waitsForABehindBootstrapSspWithNoEnvelopeAndSaysWhich(): Unit = {
    val c = task(Map(cur0 -> 2L, cur1 -> 1L))
    c.update(env(tx0, 0))
    c.update(env(cur0, 0))
    assertEquals(cur0, c.choose().ssp)
    // cur0 (behind, not re-offered yet) and cur1 (behind, never offered) block tx.
    assertNull(c.choose())
    assertEquals(Seq(cur0, cur1), c.waitingFor)
    assertTrue(c.isBootstrapping)
    c.update(env(cur1, 0))
    assertEquals(Seq(cur0), c.waitingFor)
    assertEquals(cur1, c.choose().ssp)
    assertNull(c.choose())
    c.update(env(cur0, 1))
    assertEquals(cur0, c.choose().ssp)
    assertEquals(Nil, c.waitingFor)
    assertEquals(tx0, c.choose().ssp)
    assertNull(c.choose(), "nothing is left outstanding")
  }

  @Test def progressWithoutEnvelopesCatchesUp(): Unit = {
    // Offset 2 (just before head 3) is a control message or a transaction marker: no envelope.
    val c = task(Map(cur0 -> 3L, cur1 -> 0L))
    c.update(env(tx0, 0)); c.update(env(cur0, 0))
    assertEquals(0L, c.choose().offset)
    c.update(env(cur0, 1))
    // The buffer is drained up to 3, but offset 1 is still outstanding: nothing is released yet.
    c.advancedTo(cur0, 3)
    assertEquals(cur0, c.choose().ssp)
    assertEquals(tx0, c.choose().ssp)
    assertFalse(c.isBootstrapping)
  }

  @Test def advancedToWithNothingOutstandingReleasesAtOnce(): Unit = {
    val c = task(Map(cur0 -> 3L, cur1 -> 0L))
    c.update(env(tx0, 0))
    assertNull(c.choose())
    c.advancedTo(cur0, 2)
    assertNull(c.choose())
    c.advancedTo(cur0, 3)
    assertEquals(tx0, c.choose().ssp)
  }

  @Test def aBootstrapSspWithoutHeadIsNamed(): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => task(Map(cur0 -> 3L)))
    assertTrue(e.getMessage.contains("kafka/currency/1"), e.getMessage)
  }

  @Test def bootstrapEnvelopesKeepTheirPriorityOrder(): Unit = {
    val cfg = ChooserConfig.parse(
      Map(
        "stream.currency.bootstrap" -> "true",
        "stream.rates.bootstrap" -> "true",
        "stream.rates.priority" -> "1"
      ),
      Seq("currency", "rates", "tx")
    )
    val rates0 = ssp("rates", 0)
    val c = ChooserFactory.forTask(
      cfg,
      Map(cur0 -> 0L, rates0 -> 0L, tx0 -> 0L),
      Map(cur0 -> 2L, rates0 -> 2L)
    )
    val out = read(c, records(tx0, 1) ++ records(cur0, 2) ++ records(rates0, 2))
    assertEquals("rates rates currency currency tx", streams(out))
  }
}
