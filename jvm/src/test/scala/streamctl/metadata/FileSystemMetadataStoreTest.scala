package streamctl.metadata

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path => JPath}
import java.util.concurrent.atomic.AtomicReference

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.{AfterEach, Test}

import streamctl.StreamctlException

class FileSystemMetadataStoreTest extends MetadataStoreContract {
  private val dir: JPath = Files.createTempDirectory("streamctl-store")
  private val conf = new Configuration()
  override protected val store: FileSystemMetadataStore =
    new FileSystemMetadataStore(dir.resolve("root").toString, conf)

  @AfterEach def cleanUp(): Unit = {
    // Restore permissions a test may have removed, so the tree can be deleted.
    Files.walk(dir).iterator().asScala.foreach(_.toFile.setWritable(true))
    Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).forEach(p =>
      Files.deleteIfExists(p)
    )
  }

  private def filesIn(ns: String): Seq[String] =
    Files.list(
      dir.resolve("root").resolve(ns)
    ).iterator().asScala.map(_.getFileName.toString).toSeq.sorted

  @Test def existsOnceSomethingWasWritten(): Unit = {
    assertFalse(store.exists, "opening creates nothing")
    store.put("startpoints", "kafka/o/0", "{}")
    assertTrue(store.exists)
  }

  @Test def layoutIsNamespaceDirectoryAndEncodedJsonFile(): Unit = {
    store.put("startpoints", "kafka/orders/3/Partition 3", "{}")
    // No temp file left behind, and no .crc side files from the checksummed local FS.
    assertEquals(Seq("kafka%2Forders%2F3%2FPartition%203.json"), filesIn("startpoints"))
    val onDisk =
      Files.readString(dir.resolve("root/startpoints/kafka%2Forders%2F3%2FPartition%203.json"))
    assertEquals("{}", onDisk)
  }

  @Test def keysIgnoreTempAndStrayFiles(): Unit = {
    store.put("ns", "real", "1")
    val ns = dir.resolve("root/ns")
    Files.writeString(ns.resolve(".3f2a9c.tmp"), "half written")
    Files.writeString(ns.resolve("notes.txt"), "x")
    Files.writeString(ns.resolve("a b.json"), "x") // not a name encode() produces
    Files.createDirectory(ns.resolve("sub.json"))
    assertEquals(Seq("real"), store.keys("ns"))
  }

  @Test def fileUriAndPlainPathAreTheSameStore(): Unit = {
    store.put("ns", "k", "v")
    val viaUri = MetadataStore.open(dir.resolve("root").toUri.toString, conf)
    assertEquals(Some("v"), viaUri.get("ns", "k"))
    assertTrue(viaUri.location.startsWith("file:"), viaUri.location)
  }

  @Test def nothingIsCreatedBeforeTheFirstWrite(): Unit = {
    assertEquals(None, store.get("ns", "k"))
    assertEquals(Seq.empty, store.keys("ns"))
    assertFalse(Files.exists(dir.resolve("root")))
  }

  @Test def overwriteIsAtomicForConcurrentReaders(): Unit = {
    val big = Seq("a", "b").map(_ * 200000)
    store.put("ns", "k", big(0))
    val seen = new AtomicReference[String]()
    @volatile var writing = true
    val reader = new Thread(() =>
      while (writing && seen.get == null) {
        store.get("ns", "k") match {
          case Some(v) if big.contains(v) =>
          case other =>
            seen.set(other.map(v => s"torn value of length ${v.length}").getOrElse("no value"))
        }
      }
    )
    reader.start()
    for (i <- 1 to 300) store.put("ns", "k", big(i % 2))
    writing = false
    reader.join()
    assertNull(seen.get, "a reader saw " + seen.get)
    assertEquals(Seq("k.json"), filesIn("ns"))
  }

  @Test def unwritableRootIsAClearErrorNamingThePath(): Unit = {
    // A parent that is a regular file cannot be made a directory, even by root.
    val file = Files.writeString(dir.resolve("plain-file"), "x", StandardCharsets.UTF_8)
    val root = file.resolve("store").toString
    val bad = new FileSystemMetadataStore(root, conf)
    val onPut = assertThrows(
      classOf[StreamctlException],
      () => bad.put("startpoints", "kafka/orders/3", "{}")
    )
    assertTrue(onPut.getMessage.contains(file.toString), onPut.getMessage)
    assertTrue(onPut.getMessage.contains("kafka/orders/3"), onPut.getMessage)
    val early = assertThrows(
      classOf[StreamctlException],
      () => MetadataStore.open(root, conf).ensureWritable()
    )
    assertTrue(
      early.getMessage.contains(root) && early.getMessage.contains("not writable"),
      early.getMessage
    )
  }

  @Test def readOnlyDirectoryIsAClearError(): Unit = {
    // Not a directory made read-only with chmod: CI runs as root, which ignores permissions; no
    // one, root included, can make a directory in /proc.
    val ro = java.nio.file.Paths.get("/proc")
    val e = assertThrows(
      classOf[StreamctlException],
      () => MetadataStore.open(ro.resolve("store").toString, conf).ensureWritable()
    )
    assertTrue(e.getMessage.contains(ro.toString), e.getMessage)
  }

  @Test def emptyOrInvalidRootIsRejected(): Unit = {
    assertThrows(classOf[StreamctlException], () => new FileSystemMetadataStore(" ", conf))
    val e = assertThrows(
      classOf[StreamctlException],
      () => new FileSystemMetadataStore("nosuchscheme://x/y", conf)
    )
    assertTrue(e.getMessage.contains("nosuchscheme://x/y"), e.getMessage)
  }

  @Test def listingsSeeOnlyWholeFilesLeftOverFromACrash(): Unit = {
    store.put("ns", "k", "old")
    // What a crash between writing the temp file and renaming it leaves behind.
    Files.writeString(dir.resolve("root/ns/.0000-crash.tmp"), "new")
    assertEquals(Some("old"), store.get("ns", "k"))
    assertEquals(Seq("k"), store.keys("ns"))
  }
}
