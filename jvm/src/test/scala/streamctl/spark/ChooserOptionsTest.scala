package streamctl.spark

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.chooser.ChooserConfig

class ChooserOptionsTest {
  private def options(kv: (String, String)*) =
    SourceOptions(Map("kafka.bootstrap.servers" -> "127.0.0.1:1", "streams" -> "Rates,tx.v2") ++ kv)

  @Test def keysAreCaseInsensitiveButStreamNamesAreNot(): Unit = {
    val c = ChooserOptions.parse(options("Stream.Rates.Bootstrap" -> "true", "stream.tx.v2.PRIORITY" -> "4",
      "Chooser" -> "time-aligned", "CHOOSER.batch.size" -> "3"))
    assertEquals(Set("Rates"), c.bootstrapStreams)
    assertEquals(4, c.priorityOf("tx.v2"))
    assertEquals(ChooserConfig.TimeAligned, c.kind)
    assertEquals(Some(3), c.batchSize)
  }

  @Test def aClassThatCannotBeLoadedFailsValidationNamingTheOption(): Unit = {
    val e = assertThrows(classOf[StreamctlException],
      () => ChooserOptions.validated(options("chooser.class" -> "com.example.Nope")))
    assertTrue(e.getMessage.contains("Option chooser.class: class 'com.example.Nope'"), e.getMessage)
  }

  @Test def optionsOfAUserChooserReachItInLowerCase(): Unit = {
    val example = "streamctl.testing.examples.StreamOrderChooser"
    val c = ChooserOptions.validated(options("chooser.class" -> example, "Chooser.Option.ORDER" -> "tx.v2,Rates"))
    assertEquals(Some("tx.v2,Rates"), c.options.get("chooser.option.order"))
    val wrong = assertThrows(classOf[StreamctlException],
      () => ChooserOptions.validated(options("chooser.class" -> example, "chooser.option.order" -> "Rates,fx")))
    assertTrue(wrong.getMessage.contains("'chooser.option.order' names fx, not in 'streams'"), wrong.getMessage)
  }

  @Test def optionsForAUserClassThatIsNotSetAreAnError(): Unit =
    Seq("chooser.option.order" -> "chooser.class", "Grouper.Option.Size" -> "grouper.class").foreach { case (k, owner) =>
      val e = assertThrows(classOf[StreamctlException], () => options(k -> "1"))
      assertEquals(s"Option '$k' is for the class named by option '$owner', and '$owner' is not set", e.getMessage)
    }

  @Test def readerConfigCarriesTheChooser(): Unit =
    assertEquals(Set("Rates"), ReaderConfig(options("stream.Rates.bootstrap" -> "true")).chooser.bootstrapStreams)
}
