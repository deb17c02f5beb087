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
  private val fs = new RawLocalFileSystem {
    override def rename(src: Path, dst: Path): Boolean = !refuseRenames && super.rename(src, dst)
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

  @AfterEach def cleanUp(): Unit =
    Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).forEach(p =>
      Files.deleteIfExists(p)
    )
}
