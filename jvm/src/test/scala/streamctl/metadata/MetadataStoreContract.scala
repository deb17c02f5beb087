package streamctl.metadata

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException

/** Behaviour every MetadataStore must have; each implementation's test extends this. */
abstract class MetadataStoreContract {
  protected def store: MetadataStore

  @Test def getOfAbsentKeyIsNone(): Unit =
    assertEquals(None, store.get("startpoints", "kafka/orders/3"))

  @Test def putThenGetThenOverwrite(): Unit = {
    store.put("startpoints", "kafka/orders/3", """{"a":1}""")
    assertEquals(Some("""{"a":1}"""), store.get("startpoints", "kafka/orders/3"))
    store.put("startpoints", "kafka/orders/3", """{"a":2}""")
    assertEquals(Some("""{"a":2}"""), store.get("startpoints", "kafka/orders/3"))
    assertEquals(Seq("kafka/orders/3"), store.keys("startpoints"))
  }

  @Test def namespacesAreSeparate(): Unit = {
    store.put("startpoints", "k", "1")
    store.put("grouper", "k", "2")
    assertEquals(Some("1"), store.get("startpoints", "k"))
    assertEquals(Some("2"), store.get("grouper", "k"))
    store.delete("grouper", "k")
    assertEquals(Some("1"), store.get("startpoints", "k"))
  }

  @Test def keysAreSortedAndEmptyForUnknownNamespace(): Unit = {
    assertEquals(Seq.empty, store.keys("nothing-here"))
    for (k <- Seq("b", "a/2", "a/10", "Z", "a")) store.put("ns", k, k)
    assertEquals(Seq("Z", "a", "a/10", "a/2", "b"), store.keys("ns"))
  }

  @Test def deleteIsIdempotent(): Unit = {
    store.put("ns", "k", "v")
    store.delete("ns", "k")
    store.delete("ns", "k")
    assertEquals(None, store.get("ns", "k"))
    assertEquals(Seq.empty, store.keys("ns"))
  }

  @Test def oddKeysRoundTrip(): Unit = {
    val odd = Seq(
      "kafka/orders/3/Partition 3",
      ".",
      "..",
      ".hidden",
      "a+b",
      "a%20b",
      "ключ/键",
      "x:y",
      "a b.json",
      "-",
      "tmp.tmp"
    )
    odd.foreach(k => store.put("ns", k, s"value of $k"))
    odd.foreach(k => assertEquals(Some(s"value of $k"), store.get("ns", k), k))
    assertEquals(odd.sorted, store.keys("ns"))
  }

  @Test def valuesKeepUnicode(): Unit = {
    store.put("ns", "k", """{"name":"Zürich ✓"}""")
    assertEquals(Some("""{"name":"Zürich ✓"}"""), store.get("ns", "k"))
  }

  @Test def badNamespacesAreRejectedByName(): Unit =
    for (ns <- Seq("", "a/b", "..", ".x", "a b", "x" * 101)) {
      val e = assertThrows(classOf[StreamctlException], () => store.put(ns, "k", "v"))
      assertTrue(e.getMessage.contains(s"'$ns'"), e.getMessage)
    }

  @Test def badKeysAreRejectedWithTheReason(): Unit = {
    assertTrue(assertThrows(
      classOf[StreamctlException],
      () => store.put("ns", "", "v")
    ).getMessage.contains("empty"))
    assertTrue(assertThrows(
      classOf[StreamctlException],
      () => store.get("ns", "a\nb")
    ).getMessage.contains("control"))
    assertTrue(assertThrows(
      classOf[StreamctlException],
      () => store.put("ns", "é" * 60, "v")
    ).getMessage.contains("too long"))
  }
}
