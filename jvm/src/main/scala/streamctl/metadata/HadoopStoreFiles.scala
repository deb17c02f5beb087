package streamctl.metadata

import java.io.{FileNotFoundException, IOException}
import java.util.UUID

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{
  CommonPathCapabilities,
  FileContext,
  FileStatus,
  FileSystem,
  Options,
  Path,
  UnsupportedFileSystemException
}

/**
 * Any non-local Hadoop file system (HDFS, S3A, ABFS, GCS ...). How a value is replaced, and what a
 * reader or a crash can see, depends on the store:
 *
 *   - A store that declares `CommonPathCapabilities.ABORTABLE_STREAM` for the path (S3A): the value
 *     is written in place, as Spark's checkpoint code does on such stores. The object appears whole
 *     when its stream closes; a failed write is aborted, so nothing is published. A reader sees the
 *     old value or the new one, and a crash mid-write leaves the old value.
 *   - Any other store with a FileContext binding: a temp file `.<uuid>.tmp`, then
 *     `FileContext.rename(OVERWRITE)`. Atomic on HDFS: old value or new one. On an object store
 *     without abortable streams (ABFS, GCS when this was written) that rename is delete-then-copy:
 *     the key is missing for a moment, and a crash in between leaves the new value only in the temp
 *     file.
 *   - A scheme without a FileContext binding: a temp file, then `FileSystem.rename`; if that is
 *     refused (most stores will not rename over a file), delete-then-rename, with the same window.
 *
 * A failed replace removes its temp file only while the target is still there; otherwise the temp
 * file may be the only copy of the value, so it is kept, and the error names it. Temp files are
 * never listed as keys.
 *
 * `fs` is Hadoop's cached instance, shared with Spark, so it is never closed here.
 */
private[metadata] final class HadoopStoreFiles(
    rootPath: Path,
    fs: FileSystem,
    fileContext: Option[FileContext]
) extends StoreFiles {
  override val root: String = rootPath.toString

  private def pathOf(namespace: String, file: String) =
    new Path(new Path(rootPath, namespace), file)

  override def describe(namespace: String, file: String): String = pathOf(namespace, file).toString

  override def read(namespace: String, file: String): Option[Array[Byte]] =
    try {
      val in = fs.open(pathOf(namespace, file))
      try Some(in.readAllBytes())
      finally in.close()
    } catch { case _: FileNotFoundException => None }

  override def writeAtomically(namespace: String, file: String, bytes: Array[Byte]): Unit = {
    val dir = new Path(rootPath, namespace)
    val target = new Path(dir, file)
    if (!fs.mkdirs(dir)) throw new IOException(s"could not create directory $dir")
    if (fs.hasPathCapability(target, CommonPathCapabilities.ABORTABLE_STREAM))
      writeInPlace(target, bytes)
    else writeThenRename(dir, target, bytes)
  }

  /**
   * On an object store, renaming over the target would delete it first; writing the target itself
   * keeps the old value until the new one is complete, provided a failed write is aborted rather
   * than closed (closing would publish the partial bytes).
   */
  private def writeInPlace(target: Path, bytes: Array[Byte]): Unit = {
    val out = fs.create(target, true)
    try out.write(bytes)
    catch {
      case e: Throwable =>
        try {
          out.abort()
          out.close()
        } catch { case NonFatal(abortFailure) => e.addSuppressed(abortFailure) }
        throw e
    }
    out.close()
  }

  private def writeThenRename(dir: Path, target: Path, bytes: Array[Byte]): Unit = {
    val temp = new Path(dir, s".${UUID.randomUUID()}${FileSystemMetadataStore.TempSuffix}")
    create(temp, bytes)
    try fileContext match {
        case Some(fc) => fc.rename(temp, target, Options.Rename.OVERWRITE)
        case None =>
          // FileSystem.rename has no overwrite, and most stores refuse to rename over a file: the
          // only portable replace left is delete-then-rename. It comes only after a plain rename
          // failed, so a store that can rename over a file never has the target deleted.
          if (!fs.rename(temp, target)) {
            fs.delete(target, false)
            if (!fs.rename(temp, target))
              throw new IOException(s"could not rename $temp to $target")
          }
      }
    catch {
      case e: IOException =>
        if (!targetExists(target))
          throw new IOException(
            s"could not replace $target, which is missing; its new value is kept in $temp " +
              s"(${e.getMessage})",
            e
          )
        try fs.delete(temp, false)
        catch { case _: IOException => };
        throw e
    }
  }

  /** False also when it cannot be told, so that a temp file is kept rather than risked. */
  private def targetExists(target: Path): Boolean =
    try fs.exists(target)
    catch { case _: IOException => false }

  override def delete(namespace: String, file: String): Unit = {
    fs.delete(pathOf(namespace, file), false)
    ()
  }

  override def list(namespace: String): Seq[String] = {
    val statuses =
      try fs.listStatus(new Path(rootPath, namespace))
      catch { case _: FileNotFoundException => Array.empty[FileStatus] }
    statuses.iterator.filter(_.isFile).map(_.getPath.getName).toVector
  }

  override def exists(): Boolean =
    try fs.getFileStatus(rootPath).isDirectory
    catch { case _: FileNotFoundException => false }

  override def probe(): Unit = {
    if (!fs.mkdirs(rootPath)) throw new IOException(s"could not create directory $rootPath")
    val probe =
      new Path(rootPath, s".probe-${UUID.randomUUID()}${FileSystemMetadataStore.TempSuffix}")
    create(probe, Array.emptyByteArray)
    fs.delete(probe, false)
  }

  /* A write or close that fails (a quota, a lost pipeline) deletes what it left: nothing else ever
   * removes a temp file, and one per failed write would add up. */
  private def create(path: Path, bytes: Array[Byte]): Unit = {
    val out = fs.create(path, false)
    try
      try out.write(bytes)
      finally out.close()
    catch {
      case e: Throwable =>
        try fs.delete(path, false)
        catch { case NonFatal(deleteFailure) => e.addSuppressed(deleteFailure) }
        throw e
    }
  }
}

private[metadata] object HadoopStoreFiles {
  def apply(rootPath: Path, fs: FileSystem, conf: Configuration): HadoopStoreFiles = {
    val fc =
      try Some(FileContext.getFileContext(rootPath.toUri, conf))
      catch { case _: UnsupportedFileSystemException => None }
    new HadoopStoreFiles(rootPath, fs, fc)
  }
}
