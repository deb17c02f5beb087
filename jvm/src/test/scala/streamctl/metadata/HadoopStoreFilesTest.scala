package streamctl.metadata

import java.nio.file.{Files, Path => JPath}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileContext, FileSystem, Path}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.{AfterEach, Test}

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
