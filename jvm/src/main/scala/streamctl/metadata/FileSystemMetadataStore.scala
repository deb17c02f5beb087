package streamctl
package metadata

import java.io.{IOException, UncheckedIOException}
import java.nio.charset.StandardCharsets
import java.nio.file.Paths

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import streamctl.StreamctlException

/**
 * The default [[MetadataStore]]: one small JSON file per key on any Hadoop file system URI (a local
 * path, `file:`, `hdfs:`, `s3a:` ...), laid out as `<root>/<namespace>/<encoded key>.json`, keys
 * encoded by [[StoreKeys.encode]].
 *
 * A reader never sees a torn value. On local disk and HDFS a write goes to a temp file
 * `.<uuid>.tmp` in the namespace directory, atomically renamed over the target; on an object store
 * with abortable streams (S3A) it writes the target in place, the object appearing whole when
 * complete. Either way a reader or a crash sees the old value or the new one. On other object
 * stores (ABFS, GCS) replacing a file is delete-then-copy: a key can be missing for a moment, and a
 * crash then leaves its new value only in a temp file. [[HadoopStoreFiles]] has the details. Temp
 * files are never listed as keys.
 *
 * Nothing is created until the first write, so read-only tools can open a store freely; call
 * [[ensureWritable]] to fail fast when a store must be written (a query start).
 *
 * {{{
 * val store = new FileSystemMetadataStore("hdfs:///checkpoints/q1/streamctl", spark.sparkContext.hadoopConfiguration)
 * store.put("startpoints", "kafka/orders/3", """{"type":"oldest","creationTime":0,"version":1}""")
 * store.keys("startpoints") // Seq("kafka/orders/3")
 * }}}
 */
class FileSystemMetadataStore private[metadata] (files: StoreFiles) extends MetadataStore {
  import FileSystemMetadataStore._

  def this(rootUri: String, hadoopConf: Configuration) =
    this(FileSystemMetadataStore.filesAt(rootUri, hadoopConf))

  /** The qualified root, e.g. `file:///tmp/q1/streamctl/`. */
  def location: String = files.root

  /**
   * Whether anything was ever written here (nothing is created before the first write): a tool
   * reading a store that does not exist is most likely pointed at the wrong path.
   */
  def exists: Boolean = io(s"cannot read root ${files.root}")(files.exists())

  /** Creates the root if needed and proves a file can be written there; else a clear error. */
  def ensureWritable(): this.type = {
    io(s"root ${files.root} is not writable")(files.probe())
    this
  }

  override def get(namespace: String, key: String): Option[String] = {
    val file = fileName(namespace, key)
    io(s"cannot read key '$key' of namespace '$namespace' at ${files.describe(namespace, file)}") {
      files.read(namespace, file).map(new String(_, StandardCharsets.UTF_8))
    }
  }

  override def put(namespace: String, key: String, value: String): Unit = {
    val file = fileName(namespace, key)
    if (value == null) throw StreamctlException(
      s"Null value for metadata store key '$key' in namespace '$namespace'"
    )
    io(s"cannot write key '$key' of namespace '$namespace' at ${files.describe(namespace, file)}") {
      files.writeAtomically(namespace, file, value.getBytes(StandardCharsets.UTF_8))
    }
  }

  override def delete(namespace: String, key: String): Unit = {
    val file = fileName(namespace, key)
    io(
      s"cannot delete key '$key' of namespace '$namespace' at ${files.describe(namespace, file)}"
    ) {
      files.delete(namespace, file)
    }
  }

  override def keys(namespace: String): Seq[String] = {
    StoreKeys.validateNamespace(namespace)
    io(s"cannot list namespace '$namespace' under ${files.root}") {
      files.list(namespace).iterator
        .filter(_.endsWith(ValueSuffix))
        .flatMap(name => StoreKeys.decode(name.dropRight(ValueSuffix.length)))
        .toVector
        .sorted
    }
  }

  override def describe(namespace: String, key: String): String =
    files.describe(namespace, fileName(namespace, key))

  override def toString: String = s"FileSystemMetadataStore(${files.root})"

  private def fileName(namespace: String, key: String): String = {
    StoreKeys.validateNamespace(namespace)
    StoreKeys.validateKey(namespace, key)
    StoreKeys.encode(key) + ValueSuffix
  }

  private def io[T](what: String)(body: => T): T =
    try body
    catch {
      case e @ (_: IOException | _: UncheckedIOException) =>
        throw StreamctlException(
          s"Metadata store: $what (${e.getClass.getSimpleName}: ${firstLine(e.getMessage)})",
          e
        )
    }
}

object FileSystemMetadataStore {
  private[metadata] val ValueSuffix = ".json"
  private[metadata] val TempSuffix = ".tmp"

  private def filesAt(rootUri: String, hadoopConf: Configuration): StoreFiles = {
    if (rootUri == null || rootUri.trim.isEmpty)
      throw StreamctlException("Metadata store path is empty")
    try {
      val path = new Path(rootUri)
      val fs = path.getFileSystem(hadoopConf)
      val qualified = fs.makeQualified(path)
      if (qualified.toUri.getScheme == "file") new LocalStoreFiles(Paths.get(qualified.toUri))
      else HadoopStoreFiles(qualified, fs, hadoopConf)
    } catch {
      case e @ (_: IOException | _: IllegalArgumentException) =>
        throw StreamctlException(
          s"Cannot open metadata store at '$rootUri': ${firstLine(e.getMessage)}",
          e
        )
    }
  }

  private def firstLine(s: String): String =
    Option(s).flatMap(_.linesIterator.nextOption()).getOrElse("")
}
