package streamctl.metadata

import java.net.URI
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path => JPath}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileContext, FileSystem, Path, RawLocalFileSystem}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.{AfterEach, Test}

import streamctl.StreamctlException

/**
 * The store's Hadoop code path (used for hdfs:, s3a: ...), exercised on Hadoop's checksummed local
 * file system, which no store URI reaches (file: goes through java.nio).
 */
abstract class HadoopStoreFilesContract extends MetadataStoreContract {
  protected val dir: JPath = Files.createTempDirectory("streamctl-hadoop-store")
  private val conf = new Configuration()
  private val fs = FileSystem.getLocal(conf)
  private val root = fs.makeQualified(new Path(dir.resolve("root").toString))
  protected def fileContext(conf: Configuration, root: Path): Option[FileContext]
  override protected val store: FileSystemMetadataStore =
    new FileSystemMetadataStore(new HadoopStoreFiles(root, fs, fileContext(conf, root)))

  @Test def existsOnceSomethingWasWritten(): Unit = {
    assertFalse(store.exists, "opening creates nothing")
    store.put("startpoints", "kafka/o/0", "{}")
    assertTrue(store.exists)
  }

  @AfterEach def cleanUp(): Unit =
    Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).forEach(p =>
      Files.deleteIfExists(p)
    )
}

/** Replace by FileContext.rename(OVERWRITE), as on HDFS. */
class HadoopStoreFilesWithFileContextTest extends HadoopStoreFilesContract {
  override protected def fileContext(conf: Configuration, root: Path) =
    Some(FileContext.getFileContext(root.toUri, conf))
}

/** A scheme with no FileContext binding: rename, else delete-then-rename. */
class HadoopStoreFilesWithoutFileContextTest extends HadoopStoreFilesContract {
  override protected def fileContext(conf: Configuration, root: Path) = None
}

/**
 * A scheme with no FileContext binding whose rename never succeeds: the target is deleted before
 * the second try, so the temp file holding the new value must be kept and named.
 */
class HadoopStoreFilesRenameRefusedTest {
  private val dir: JPath = Files.createTempDirectory("streamctl-hadoop-store")
  private val conf = new Configuration()
  @volatile private var refuseRenames = false
  @volatile private var failCloses = false
  private val fs = new RawLocalFileSystem {
    override def rename(src: Path, dst: Path): Boolean = !refuseRenames && super.rename(src, dst)
    // As a full quota fails a write on HDFS: at close, the file already created.
    override def create(f: Path, overwrite: Boolean): org.apache.hadoop.fs.FSDataOutputStream = {
      val out = super.create(f, overwrite)
      if (!failCloses) out
      else new org.apache.hadoop.fs.FSDataOutputStream(out, null) {
        override def close(): Unit = {
          out.close()
          throw new java.io.IOException("The DiskSpace quota of /chk is exceeded")
        }
      }
    }
  }
  fs.initialize(URI.create("file:///"), conf)
  private val root = fs.makeQualified(new Path(dir.resolve("root").toString))
  private val store = new FileSystemMetadataStore(new HadoopStoreFiles(root, fs, None))

  @Test def aFailedReplaceKeepsTheNewValueInItsTempFile(): Unit = {
    store.put("ns", "k", "old")
    refuseRenames = true
    val e = assertThrows(classOf[StreamctlException], () => store.put("ns", "k", "new"))
    val listing = Files.list(dir.resolve("root").resolve("ns"))
    val temps =
      try listing.toArray.map(_.asInstanceOf[JPath])
          .filter(_.getFileName.toString.endsWith(FileSystemMetadataStore.TempSuffix))
      finally listing.close()
    assertEquals(1, temps.length, temps.mkString(", "))
    assertTrue(e.getMessage.contains(temps.head.getFileName.toString), e.getMessage)
    assertEquals("new", new String(Files.readAllBytes(temps.head), StandardCharsets.UTF_8))
  }

  @Test def aWriteThatFailsLeavesNoTempFileBehind(): Unit = {
    store.put("ns", "k", "old")
    failCloses = true
    val e = assertThrows(classOf[StreamctlException], () => store.put("ns", "k", "new"))
    assertTrue(e.getMessage.contains("quota"), e.getMessage)
    assertThrows(classOf[StreamctlException], () => store.ensureWritable())
    failCloses = false
    def names(sub: JPath): Seq[String] = {
      val listing = Files.list(sub)
      try listing.toArray.map(_.asInstanceOf[JPath].getFileName.toString).toSeq.sorted
      finally listing.close()
    }
    assertEquals(Seq("k.json"), names(dir.resolve("root").resolve("ns")))
    assertEquals(Seq("ns"), names(dir.resolve("root")))
    assertEquals(Some("old"), store.get("ns", "k"))
  }

  @AfterEach def cleanUp(): Unit =
    Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).forEach(p =>
      Files.deleteIfExists(p)
    )
}
