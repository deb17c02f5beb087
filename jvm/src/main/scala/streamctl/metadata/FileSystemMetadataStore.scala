package streamctl.metadata

import java.io.{FileNotFoundException, IOException}
import java.nio.charset.StandardCharsets
import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileContext, FileStatus, FileSystem, Options, Path, UnsupportedFileSystemException}

import streamctl.StreamctlException

/**
 * The default [[MetadataStore]]: one small JSON file per key on any Hadoop file system
 * (a local path, `file:`, `hdfs:`, `s3a:` ...), laid out as
 * `<root>/<namespace>/<encoded key>.json` with keys encoded by [[StoreKeys.encode]].
 *
 * A write goes to a temp file in the namespace directory and is then renamed over the
 * target, so a reader sees the old value or the new one, never a torn file:
 *  - local disk: a plain POSIX rename, which replaces the target atomically;
 *  - other schemes: `FileContext.rename(OVERWRITE)`, atomic on HDFS; on object stores the
 *    object still appears whole, but the old value may be briefly absent;
 *  - a scheme without a `FileContext` binding: rename, else delete-then-rename.
 * Temp files (`.<uuid>.tmp`) left by a crash are never listed as keys.
 *
 * Nothing is created until the first write, so read-only tools can open a store freely;
 * call [[ensureWritable]] to fail fast when a store must be written (a query start).
 * `close()` leaves the `FileSystem` open: it is Hadoop's cached instance, shared with Spark.
 *
 * {{{
 * val store = new FileSystemMetadataStore("hdfs:///checkpoints/q1/streamctl", spark.sparkContext.hadoopConfiguration)
 * store.put("startpoints", "kafka/orders/3", """{"type":"oldest","creationTime":0,"version":1}""")
 * store.keys("startpoints") // Seq("kafka/orders/3")
 * }}}
 */
class FileSystemMetadataStore(rootUri: String, hadoopConf: Configuration) extends MetadataStore {
  import FileSystemMetadataStore._

  if (rootUri == null || rootUri.trim.isEmpty) throw StreamctlException("Metadata store path is empty")

  private val (fs: FileSystem, root: Path) = {
    val path = try new Path(rootUri) catch {
      case e: IllegalArgumentException => throw StreamctlException(s"Invalid metadata store path '$rootUri': ${e.getMessage}", e)
    }
    val (fileSystem, qualified) = try {
      val f = path.getFileSystem(hadoopConf)
      (f, f.makeQualified(path))
    } catch {
      case e: IOException => throw StreamctlException(s"Cannot open metadata store at '$rootUri': ${e.getMessage}", e)
    }
    // The checksummed local file system writes .crc side files and renames without
    // overwriting; its raw form does a single atomic rename(2).
    if (qualified.toUri.getScheme == "file") (FileSystem.getLocal(hadoopConf).getRaw, qualified)
    else (fileSystem, qualified)
  }

  private lazy val fileContext: Option[FileContext] =
    try Some(FileContext.getFileContext(root.toUri, hadoopConf))
    catch { case _: UnsupportedFileSystemException => None }

  /** The qualified root, e.g. `file:/tmp/q1/streamctl`. */
  def location: String = root.toString

  /** Creates the root if needed and proves that a file can be written and renamed there. */
  def ensureWritable(): this.type = {
    val probe = new Path(root, s".probe-${UUID.randomUUID()}.tmp")
    io(s"root $root is not writable") {
      mkdirs(root)
      writeFile(probe, Array.emptyByteArray)
      fs.delete(probe, false)
    }
    this
  }

  override def get(namespace: String, key: String): Option[String] = {
    val file = fileFor(namespace, key)
    io(s"cannot read key '$key' of namespace '$namespace' at $file") {
      try {
        val in = fs.open(file)
        try Some(new String(in.readAllBytes(), StandardCharsets.UTF_8)) finally in.close()
      } catch { case _: FileNotFoundException => None }
    }
  }

  override def put(namespace: String, key: String, value: String): Unit = {
    val file = fileFor(namespace, key)
    if (value == null) throw StreamctlException(s"Null value for metadata store key '$key' in namespace '$namespace'")
    val dir = file.getParent
    val temp = new Path(dir, s".${UUID.randomUUID()}$TempSuffix")
    io(s"cannot write key '$key' of namespace '$namespace' at $file") {
      mkdirs(dir)
      writeFile(temp, value.getBytes(StandardCharsets.UTF_8))
      try replace(temp, file)
      catch { case e: Throwable => try fs.delete(temp, false) catch { case _: IOException => }; throw e }
    }
  }

  override def delete(namespace: String, key: String): Unit = {
    val file = fileFor(namespace, key)
    io(s"cannot delete key '$key' of namespace '$namespace' at $file") {
      fs.delete(file, false) // false when already absent: deleting is idempotent
      ()
    }
  }

  override def keys(namespace: String): Seq[String] = {
    StoreKeys.validateNamespace(namespace)
    val dir = new Path(root, namespace)
    io(s"cannot list namespace '$namespace' at $dir") {
      val statuses = try fs.listStatus(dir) catch { case _: FileNotFoundException => Array.empty[FileStatus] }
      statuses.iterator
        .filter(_.isFile)
        .map(_.getPath.getName)
        .filter(_.endsWith(ValueSuffix))
        .flatMap(name => StoreKeys.decode(name.dropRight(ValueSuffix.length)))
        .toVector
        .sorted
    }
  }

  override def toString: String = s"FileSystemMetadataStore($root)"

  private def fileFor(namespace: String, key: String): Path = {
    StoreKeys.validateNamespace(namespace)
    StoreKeys.validateKey(namespace, key)
    new Path(new Path(root, namespace), StoreKeys.encode(key) + ValueSuffix)
  }

  private def mkdirs(dir: Path): Unit =
    if (!fs.mkdirs(dir)) throw new IOException(s"could not create directory $dir")

  private def writeFile(path: Path, bytes: Array[Byte]): Unit = {
    val out = fs.create(path, false)
    try out.write(bytes) finally out.close()
  }

  private def replace(temp: Path, target: Path): Unit =
    if (fs.getUri.getScheme == "file") {
      // RawLocalFileSystem.rename is File.renameTo, i.e. rename(2): atomic, replaces the target.
      if (!fs.rename(temp, target)) deleteThenRename(temp, target)
    } else fileContext match {
      case Some(fc) => fc.rename(temp, target, Options.Rename.OVERWRITE)
      case None     => if (!fs.rename(temp, target)) deleteThenRename(temp, target)
    }

  private def deleteThenRename(temp: Path, target: Path): Unit = {
    fs.delete(target, false)
    if (!fs.rename(temp, target)) throw new IOException(s"could not rename $temp to $target")
  }

  private def io[T](what: String)(body: => T): T =
    try body catch {
      case e: StreamctlException => throw e
      case e @ (_: IOException | _: java.io.UncheckedIOException) =>
        throw StreamctlException(s"Metadata store: $what (${e.getClass.getSimpleName}: ${firstLine(e.getMessage)})", e)
    }
}

object FileSystemMetadataStore {
  private[metadata] val ValueSuffix = ".json"
  private[metadata] val TempSuffix = ".tmp"

  private def firstLine(s: String): String = Option(s).flatMap(_.linesIterator.nextOption()).getOrElse("")
}
