package streamctl.testing

import java.io.IOException
import java.nio.file.{FileVisitResult, Files, Path, Paths, SimpleFileVisitor}
import java.nio.file.attribute.BasicFileAttributes
import java.util.concurrent.{ConcurrentHashMap, TimeUnit}

import org.apache.spark.sql.streaming.StreamingQueryListener
import org.apache.spark.sql.streaming.StreamingQueryListener.{
  QueryProgressEvent,
  QueryStartedEvent,
  QueryTerminatedEvent
}

/**
 * After every progress report, the bytes and the number of files under a watched query's checkpoint
 * that are new or changed since the report before (hidden files, such as Hadoop's `.crc`, left
 * out); and the queries whose end this listener has heard of. The scale benchmark measures what a
 * source writes per batch with it.
 *
 * It listens in the JVM because a Python listener slowed the very batches it measured: PySpark
 * turns each progress report into a Python object with dozens of py4j calls, on a machine whose two
 * cores the batch needs (70-100 ms more per batch at 128 partitions, in A/B runs of 2026-12-02).
 *
 * {{{
 * val bytes = new CheckpointBytes(); spark.streams.addListener(bytes)
 * bytes.watch("/tmp/checkpoint")
 * // ... run a query with that checkpoint ...
 * bytes.written(3)   // Array(bytes, files) batch 3 wrote
 * }}}
 */
final class CheckpointBytes extends StreamingQueryListener {
  @volatile private var root: Option[Path] = None
  private val perBatch = new ConcurrentHashMap[java.lang.Long, Array[Long]]()
  private val seen = new ConcurrentHashMap[Path, (Long, Long)]()
  private val ended = ConcurrentHashMap.newKeySet[String]()
  @volatile private var newest = -1L

  /** From now on, reports concern the checkpoint at `dir`; what was recorded before is dropped. */
  def watch(dir: String): Unit = synchronized {
    root = Some(Paths.get(dir)); perBatch.clear(); seen.clear(); newest = -1L
  }

  /** (bytes, files) written in batch `batchId`, as seen at its report; (0, 0) if none was heard. */
  def written(batchId: Long): Array[Long] =
    Option(perBatch.get(java.lang.Long.valueOf(batchId))).getOrElse(Array(0L, 0L))

  /** The newest batch whose report was heard, or -1. */
  def lastBatch(): Long = newest

  def hasEnded(queryId: String): Boolean = ended.contains(queryId)

  override def onQueryStarted(event: QueryStartedEvent): Unit = synchronized {
    root.foreach(scan)
  }

  override def onQueryProgress(event: QueryProgressEvent): Unit = synchronized {
    root.foreach { r =>
      perBatch.put(java.lang.Long.valueOf(event.progress.batchId), scan(r))
      newest = math.max(newest, event.progress.batchId)
    }
  }

  // Spark hands each event to every listener before the next, so by now streamctl's listener has
  // recorded the query's last batch in its progress history.
  override def onQueryTerminated(event: QueryTerminatedEvent): Unit = ended.add(event.id.toString)

  private def scan(dir: Path): Array[Long] = {
    var bytes, files = 0L
    if (Files.isDirectory(dir)) Files.walkFileTree(
      dir,
      new SimpleFileVisitor[Path] {
        override def visitFile(p: Path, attrs: BasicFileAttributes): FileVisitResult = {
          val stamp = (attrs.lastModifiedTime.to(TimeUnit.NANOSECONDS), attrs.size)
          if (!p.getFileName.toString.startsWith(".") && seen.get(p) != stamp) {
            bytes += stamp._2; files += 1
          }
          seen.put(p, stamp)
          FileVisitResult.CONTINUE
        }
        // A file Spark renames or removes while the walk passes it (a log's temporary file).
        override def visitFileFailed(p: Path, e: IOException): FileVisitResult =
          FileVisitResult.CONTINUE
      }
    )
    Array(bytes, files)
  }
}
