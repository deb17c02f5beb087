package streamctl.metadata

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class StoreLayoutTest {
  @Test def locationIsInsideTheCheckpoint(): Unit = {
    assertEquals("/chk/q1/streamctl", StoreLayout.ofQuery("/chk/q1"))
    assertEquals("hdfs://nn/chk/q1/streamctl", StoreLayout.ofQuery("hdfs://nn/chk/q1/"))
  }

  @Test def aSourceFindsItsQuerysStoreUnlessItNamesOne(): Unit = {
    assertEquals("file:/chk/q1/streamctl", StoreLayout.ofSource(None, "file:/chk/q1/sources/0"))
    assertEquals(
      "s3a://b/meta",
      StoreLayout.ofSource(Some("s3a://b/meta"), "file:/chk/q1/sources/0")
    )
    assertEquals("1", StoreLayout.sourceId("file:/chk/q1/sources/1"))
  }

  @Test def theToolsFindAQuerysStoreByTheSourcesRule(): Unit = {
    assertEquals(Some("/chk/q1/streamctl"), StoreLayout.locate(Some("/chk/q1"), None))
    assertEquals(Some("s3a://b/meta"), StoreLayout.locate(Some("/chk/q1"), Some("s3a://b/meta")))
    assertEquals(Some("s3a://b/meta"), StoreLayout.locate(None, Some("s3a://b/meta")))
    assertEquals(None, StoreLayout.locate(None, None))
  }

  @Test def keysOfASourceNameItAndReadBack(): Unit = {
    val keys = StoreLayout.Source("1")
    assertEquals(Some("1"), StoreLayout.mappingSource(keys.mappingKey))
    assertEquals(Some("1"), StoreLayout.localitySource(keys.localityKey))
    assertEquals(None, StoreLayout.mappingSource(keys.localityKey))
    assertEquals("control-1", keys.controlNamespace)
  }
}
