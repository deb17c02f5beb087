package streamctl.metadata

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class StoreKeysTest {
  @Test def encodesEverythingButSafeCharacters(): Unit = {
    assertEquals(
      "kafka%2Forders%2F3%2FPartition%203",
      StoreKeys.encode("kafka/orders/3/Partition 3")
    )
    assertEquals("%2E%2Ehidden", StoreKeys.encode("..hidden"))
    assertEquals("a%2Bb%3Ac", StoreKeys.encode("a+b:c"))
    assertEquals("%C3%A9", StoreKeys.encode("é"))
  }

  @Test def decodeInvertsEncode(): Unit =
    for (k <- Seq("kafka/orders/3/Partition 3", "%", "a+b", "ключ", "x.json", "_-"))
      assertEquals(Some(k), StoreKeys.decode(StoreKeys.encode(k)))

  @Test def decodeRefusesNamesEncodeCannotProduce(): Unit =
    for (name <- Seq("", "a b", "a.b", "%4", "%zz", "%41", "%2e", "%FF", "a+b"))
      assertEquals(None, StoreKeys.decode(name), name)

  @Test def encodedLengthMatchesEncode(): Unit =
    for (k <- Seq("", "abc", "a b/c", "é", "ключ", "键", "\uD83D\uDE00", "x" * 300))
      assertEquals(StoreKeys.encode(k).length, StoreKeys.encodedLength(k), k)

  @Test def loneSurrogateIsRefusedSinceItWouldShareAFileWithQuestionMark(): Unit = {
    val e = assertThrows(
      classOf[streamctl.StreamctlException],
      () => StoreKeys.validateKey("ns", "a\uD800")
    )
    assertTrue(e.getMessage.contains("\\ud800"), e.getMessage)
  }
}
