package streamctl.metadata

import java.io.{ByteArrayOutputStream, IOException, OutputStream}
import java.net.URI
import java.nio.file.{FileAlreadyExistsException, Files, Path => JPath}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{
  Abortable,
  CommonPathCapabilities,
  DelegateToFileSystem,
  FSDataOutputStream,
  Path,
  RawLocalFileSystem
}
import org.apache.hadoop.fs.permission.FsPermission
import org.apache.hadoop.util.Progressable
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.{AfterEach, Test}

import streamctl.StreamctlException

/**
 * The store on an object store with abortable streams, as S3A is: the value is written in place,
 * never renamed (the fake's rename fails the test), and a write that fails mid-way is aborted so
 * the old value stays. The fake is bound to its scheme through the Configuration, FileContext
 * included, as S3A is, so the store is opened from a URI the way a query opens it.
 */
class AbortableStreamStoreTest extends MetadataStoreContract {
  import AbortableLocalFileSystem.Scheme

  private val dir: JPath = Files.createTempDirectory("streamctl-abortable-store")
  private val conf = {
    val c = new Configuration()
    c.set(s"fs.$Scheme.impl", classOf[AbortableLocalFileSystem].getName)
    c.setBoolean(s"fs.$Scheme.impl.disable.cache", true)
    c.set(s"fs.AbstractFileSystem.$Scheme.impl", classOf[AbortableLocalFs].getName)
    c
  }
  override protected val store: FileSystemMetadataStore =
    new FileSystemMetadataStore(s"$Scheme://${dir.resolve("root")}", conf)

  private def filesIn(namespace: String): Seq[String] = {
    val names = Files.list(dir.resolve("root").resolve(namespace))
    try names.toArray.map(_.asInstanceOf[JPath].getFileName.toString).toSeq.sorted
    finally names.close()
  }

  @Test def aWriteReplacesTheValueInPlace(): Unit = {
    store.put("startpoints", "kafka/orders/3", "old")
    store.put("startpoints", "kafka/orders/3", "new")
    assertEquals(Some("new"), store.get("startpoints", "kafka/orders/3"))
    assertEquals(Seq(StoreKeys.encode("kafka/orders/3") + ".json"), filesIn("startpoints"))
  }

  @Test def aWriteFailingMidWayLeavesTheOldValue(): Unit = {
    store.put("startpoints", "kafka/orders/3", "old")
    AbortableLocalFileSystem.failWrites = true
    val e = assertThrows(
      classOf[StreamctlException],
      () => store.put("startpoints", "kafka/orders/3", "a new value, cut off half way")
    )
    assertTrue(e.getMessage.contains("injected"), e.getMessage)
    AbortableLocalFileSystem.failWrites = false
    assertEquals(Some("old"), store.get("startpoints", "kafka/orders/3"))
    assertEquals(Seq("kafka/orders/3"), store.keys("startpoints"))
    assertEquals(Seq(StoreKeys.encode("kafka/orders/3") + ".json"), filesIn("startpoints"))
  }

  @AfterEach def cleanUp(): Unit = {
    AbortableLocalFileSystem.failWrites = false
    Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).forEach(p =>
      Files.deleteIfExists(p)
    )
  }
}

/**
 * Local files posing as an object store with abortable streams: a created file appears, whole, only
 * when its stream closes, and an aborted stream publishes nothing. Rename is not expected.
 */
class AbortableLocalFileSystem extends RawLocalFileSystem {
  import AbortableLocalFileSystem._

  override def getUri: URI = URI.create(s"$Scheme:///")
  override def getScheme: String = Scheme

  override def hasPathCapability(path: Path, capability: String): Boolean =
    capability == CommonPathCapabilities.ABORTABLE_STREAM ||
      super.hasPathCapability(path, capability)

  // Both of the overloads RawLocalFileSystem implements, so that every create lands here.
  override def create(
      f: Path,
      permission: FsPermission,
      overwrite: Boolean,
      bufferSize: Int,
      replication: Short,
      blockSize: Long,
      progress: Progressable
  ): FSDataOutputStream = createPublishedOnClose(f, overwrite)

  override def create(
      f: Path,
      overwrite: Boolean,
      bufferSize: Int,
      replication: Short,
      blockSize: Long,
      progress: Progressable
  ): FSDataOutputStream = createPublishedOnClose(f, overwrite)

  private def createPublishedOnClose(f: Path, overwrite: Boolean): FSDataOutputStream = {
    val target = pathToFile(f).toPath
    if (!overwrite && Files.exists(target)) throw new FileAlreadyExistsException(target.toString)
    new FSDataOutputStream(new PublishedOnClose(target), statistics)
  }

  override def rename(src: Path, dst: Path): Boolean =
    throw new AssertionError(s"rename($src, $dst) on a store with abortable streams")
}

object AbortableLocalFileSystem {
  val Scheme = "abortable"

  /** Makes the next writes fail half way (a static: Hadoop instantiates the file system). */
  @volatile var failWrites = false

  private final class PublishedOnClose(target: JPath) extends OutputStream with Abortable {
    private val buffer = new ByteArrayOutputStream()
    private var finished = false

    override def write(b: Int): Unit = write(Array(b.toByte), 0, 1)

    override def write(b: Array[Byte], off: Int, len: Int): Unit = {
      buffer.write(b, off, len / 2)
      if (failWrites) throw new IOException("injected write failure")
      buffer.write(b, off + len / 2, len - len / 2)
    }

    override def close(): Unit =
      if (!finished) {
        finished = true
        Files.write(target, buffer.toByteArray)
      }

    override def abort(): Abortable.AbortableResult = {
      val wasFinished = finished
      finished = true
      new Abortable.AbortableResult {
        override def alreadyClosed(): Boolean = wasFinished
        override def anyCleanupException(): IOException = null
      }
    }
  }
}

/** The FileContext binding of [[AbortableLocalFileSystem]] (S3A has one too). */
class AbortableLocalFs(uri: URI, conf: Configuration)
    extends DelegateToFileSystem(
      uri,
      new AbortableLocalFileSystem,
      conf,
      AbortableLocalFileSystem.Scheme,
      false
    )
