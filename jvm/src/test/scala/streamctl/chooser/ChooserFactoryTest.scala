package streamctl.chooser

import streamctl.UserClass

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.chooser.ChooserFixtures._
import streamctl.system.SSP

/** Composition of the chain and loading of a user's chooser class. */
class ChooserFactoryTest {
  private val cur0 = ssp("currency", 0); private val live0 = ssp("live", 0);
  private val live1 = ssp("live", 1)
  private val back0 = ssp("backfill", 0)
  private val streamNames = Seq("currency", "live", "backfill")

  private def task(
      options: Map[String, String],
      ssps: Seq[SSP],
      heads: Map[SSP, Long] = Map.empty
  ): TaskChooser =
    ChooserFactory.forTask(
      ChooserConfig.parse(options, streamNames),
      ssps.map(_ -> 0L).toMap,
      heads
    )

  @Test def defaultIsRoundRobin(): Unit = {
    val out = read(task(Map.empty, Seq(live0, back0)), records(live0, 2) ++ records(back0, 2))
    assertEquals("live backfill live backfill", streams(out))
  }

  @Test def bootstrapThenPriorityThenBatching(): Unit = {
    val c = task(
      Map(
        "stream.currency.bootstrap" -> "true",
        "stream.live.priority" -> "10",
        "chooser.batch.size" -> "2"
      ),
      Seq(cur0, live0, live1, back0),
      Map(cur0 -> 3L)
    )
    val out =
      read(c, records(back0, 3) ++ records(live0, 3) ++ records(live1, 3) ++ records(cur0, 3))
    assertEquals(
      Seq(
        "currency-0@0",
        "currency-0@1",
        "currency-0@2", // bootstrap first
        "live-0@0",
        "live-0@1",
        "live-1@0",
        "live-1@1", // high tier, batches of 2
        "live-0@2",
        "live-1@2",
        "backfill-0@0",
        "backfill-0@1",
        "backfill-0@2"
      ),
      sspOrder(out)
    )
  }

  @Test def timeAlignedInsidePriorityTiers(): Unit = {
    val c = task(
      Map("chooser" -> "time-aligned", "stream.live.priority" -> "1"),
      Seq(live0, live1, back0)
    )
    val out = read(
      c,
      records(back0, 2, ts = o => o) ++ records(live0, 2, ts = o => 10 + 2 * o) ++
        records(live1, 2, ts = o => 11 + 2 * o)
    )
    assertEquals(Seq(10L, 11L, 12L, 13L, 0L, 1L), out.map(_.timestamp))
  }

  @Test def offeredEnvelopesAreEachChosenOnce(): Unit = {
    val c = task(Map.empty, Seq(live0, back0))
    c.update(env(live0, 0)); c.update(env(back0, 0))
    assertNotNull(c.choose())
    assertNotNull(c.choose())
    assertNull(c.choose())
    assertFalse(c.isBootstrapping)
    assertEquals(Nil, c.waitingFor)
  }

  @Test def userChooserReplacesTheBaseAndGetsTheOptions(): Unit = {
    val opts = Map("chooser.class" -> classOf[StackUserChooser].getName, "my.knob" -> "7")
    val base = ChooserFactory.newBase(ChooserConfig.parse(opts, streamNames))
    assertEquals(Some("7"), base.asInstanceOf[StackUserChooser].options.get("my.knob"))
    val c = task(opts, Seq(live0, back0))
    c.update(env(live0, 0)); c.update(env(back0, 0))
    assertEquals(back0, c.choose().ssp)
  }

  @Test def userChooserGetsOneInstancePerPriorityTier(): Unit = {
    val c = task(
      Map("chooser.class" -> classOf[StackUserChooser].getName, "stream.live.priority" -> "1"),
      Seq(live0, live1, back0)
    )
    val out = read(c, records(back0, 1) ++ records(live0, 1) ++ records(live1, 1))
    assertEquals(Seq("live-1@0", "live-0@0", "backfill-0@0"), sspOrder(out))
  }

  @Test def userChooserConstructors(): Unit = {
    def load(cls: Class[_]) =
      UserClass.instantiate("chooser.class", cls.getName, classOf[MessageChooser], Map("k" -> "v"))
    assertTrue(load(classOf[NoArgUserChooser]).isInstanceOf[NoArgUserChooser])
    assertEquals(
      "v",
      load(classOf[JavaMapUserChooser]).asInstanceOf[JavaMapUserChooser].options.get("k")
    )
  }

  private def loadError(name: String): String = {
    val cfg = ChooserConfig.parse(Map("chooser.class" -> name), streamNames)
    val e = assertThrows(classOf[StreamctlException], () => ChooserFactory.validate(cfg))
    assertTrue(e.getMessage.contains(s"Option chooser.class: class '$name'"), e.getMessage)
    e.getMessage
  }

  @Test def missingClassIsNamed(): Unit =
    assertTrue(loadError("com.example.NoSuchChooser").contains("not found"))

  @Test def classThatCannotBeLinkedSaysWhyNotThatItIsMissing(): Unit = {
    val name = "com.example.NewerChooser"
    val why =
      "com/example/NewerChooser has been compiled by a more recent version of the Java Runtime"
    val thread = Thread.currentThread
    val before = thread.getContextClassLoader
    thread.setContextClassLoader(new ClassLoader(getClass.getClassLoader) {
      override def loadClass(n: String, resolve: Boolean): Class[_] =
        if (n == name) throw new UnsupportedClassVersionError(why) else super.loadClass(n, resolve)
    })
    try {
      val message = loadError(name)
      assertTrue(
        message.contains(s"could not be loaded: java.lang.UnsupportedClassVersionError: $why"),
        message
      )
      assertFalse(message.contains("not found"), message)
    } finally thread.setContextClassLoader(before)
  }

  @Test def malformedClassNameIsNamed(): Unit =
    assertTrue(loadError("not a class!").contains("not found"))

  @Test def classThatIsNotAChooserIsNamed(): Unit =
    assertTrue(loadError(
      classOf[NotAUserChooser].getName
    ).contains("does not implement streamctl.chooser.MessageChooser"))

  @Test def abstractClassIsNamed(): Unit =
    assertTrue(loadError(classOf[AbstractUserChooser].getName).contains("abstract"))

  @Test def classWithoutUsableConstructorIsNamed(): Unit =
    assertTrue(loadError(classOf[IntArgUserChooser].getName).contains("no public constructor"))

  @Test def failingConstructorKeepsTheCause(): Unit = {
    val cfg =
      ChooserConfig.parse(Map("chooser.class" -> classOf[FailingUserChooser].getName), streamNames)
    val e = assertThrows(classOf[StreamctlException], () => ChooserFactory.validate(cfg))
    assertTrue(e.getMessage.contains("no licence"), e.getMessage)
    assertTrue(e.getCause.isInstanceOf[IllegalStateException])
  }
}
