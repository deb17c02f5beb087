package streamctl.metadata

import java.io.{FileNotFoundException, IOException}
import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{
  FileContext,
  FileStatus,
  FileSystem,
  Options,
  Path,
  UnsupportedFileSystemException
}

/**
 * Any non-local Hadoop file system (HDFS, S3A, ABFS, GCS ...). The atomic replace is
 * `FileContext.rename(OVERWRITE)`: atomic on HDFS; on object stores the new object still appears
 * whole, but the old value can be briefly absent. A scheme without a FileContext binding falls back
 * to rename, else delete-then-rename.
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
    val temp = new Path(dir, s".${UUID.randomUUID()}${FileSystemMetadataStore.TempSuffix}")
    if (!fs.mkdirs(dir)) throw new IOException(s"could not create directory $dir")
    create(temp, bytes)
    try fileContext match {
        case Some(fc) => fc.rename(temp, target, Options.Rename.OVERWRITE)
        case None =>
          if (!fs.rename(temp, target)) {
            fs.delete(target, false)
            if (!fs.rename(temp, target))
              throw new IOException(s"could not rename $temp to $target")
          }
      }
    catch {
      case e: IOException =>
        try fs.delete(temp, false)
        catch { case _: IOException => };
        throw e
    }
  }

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

  private def create(path: Path, bytes: Array[Byte]): Unit = {
    val out = fs.create(path, false)
    try out.write(bytes)
    finally out.close()
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
