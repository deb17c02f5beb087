package streamctl.metadata

import java.io.IOException
import java.nio.file.{
  AtomicMoveNotSupportedException,
  Files,
  NoSuchFileException,
  Path,
  StandardCopyOption
}
import java.util.UUID

import scala.jdk.CollectionConverters._

/**
 * Local disk through java.nio rather than Hadoop's local file system: Hadoop sets the permission of
 * every file it creates by forking `chmod` when its native library is absent (the pyspark wheel has
 * none), which made a fan-out of 2,000 keys take seconds.
 *
 * Writes go to `.<uuid>.tmp` in the same directory, then `Files.move(ATOMIC_MOVE)`, a rename(2)
 * that replaces the target atomically. Files are not fsynced: a value survives the process being
 * killed; after a power loss it is as durable as the file system makes renamed files (Spark's own
 * local checkpoint files are in the same position).
 */
private[metadata] final class LocalStoreFiles(rootDir: Path) extends StoreFiles {
  override val root: String = rootDir.toUri.toString

  override def describe(namespace: String, file: String): String =
    rootDir.resolve(namespace).resolve(file).toString

  override def read(namespace: String, file: String): Option[Array[Byte]] =
    try Some(Files.readAllBytes(rootDir.resolve(namespace).resolve(file)))
    catch { case _: NoSuchFileException => None }

  override def writeAtomically(namespace: String, file: String, bytes: Array[Byte]): Unit = {
    val dir = Files.createDirectories(rootDir.resolve(namespace))
    val temp = dir.resolve(s".${UUID.randomUUID()}${FileSystemMetadataStore.TempSuffix}")
    try {
      Files.write(temp, bytes) // a write that fails half-way (a full disk) leaves no temp file
      try Files.move(
          temp,
          dir.resolve(file),
          StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING
        )
      catch {
        // Only on exotic local mounts; a plain replace is the best left.
        case _: AtomicMoveNotSupportedException =>
          Files.move(temp, dir.resolve(file), StandardCopyOption.REPLACE_EXISTING)
      }
    } catch { case e: IOException => Files.deleteIfExists(temp); throw e }
  }

  override def delete(namespace: String, file: String): Unit = {
    Files.deleteIfExists(rootDir.resolve(namespace).resolve(file))
    ()
  }

  override def list(namespace: String): Seq[String] = {
    val dir = rootDir.resolve(namespace)
    if (!Files.isDirectory(dir)) Seq.empty
    else {
      val stream = Files.list(dir)
      try stream.iterator().asScala.filter(Files.isRegularFile(_)).map(
          _.getFileName.toString
        ).toVector
      finally stream.close()
    }
  }

  override def exists(): Boolean = Files.isDirectory(rootDir)

  override def probe(): Unit = {
    Files.createDirectories(rootDir)
    val probe = rootDir.resolve(s".probe-${UUID.randomUUID()}${FileSystemMetadataStore.TempSuffix}")
    Files.write(probe, Array.emptyByteArray)
    Files.delete(probe)
  }
}
