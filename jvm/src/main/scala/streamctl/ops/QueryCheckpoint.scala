package streamctl
package ops

import java.nio.charset.StandardCharsets

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

import streamctl.{Json, StreamctlException}
import streamctl.plan.SourcePosition
import streamctl.planner.SourceStates

/**
 * What a query's checkpoint says about its streamctl sources, read without Spark: the last
 * committed batch (the newest batch in both the offset log and the commit log), the offsets it
 * ended at per streamctl source (parsed by `planner.SourceStates.parse`, the one parser of
 * streamctl's offset), the query's event-time watermark for the next batch, and a planned batch
 * that has not committed yet.
 *
 * Spark's offset log file `offsets/<batch>` is a version line, a metadata JSON line
 * (`batchWatermarkMs`, `batchTimestampMs`, `conf`), then one line per source of the query. In `v1`
 * a source line is its offset and the source's id is the line's position (`sources/<n>`); in `v2`
 * (Spark 4.2 on with `spark.sql.streaming.offsetLog.formatVersion=2`, always with source evolution
 * on 4.3) it is `<source id>:<offset>`, the id being the source's name or index, the same one Spark
 * gives the source as `sources/<id>`. A source with no offset has `-` as its offset; a source line
 * that is not a streamctl offset (another connector) is skipped too. `commits/<batch>` exists once
 * the batch committed.
 *
 * {{{
 * val ck = QueryCheckpoint.read("/chk/q1", new Configuration())
 * ck.committed.map(_.batchId)              // Some(14)
 * ck.committed.get.sources("0").tasks      // Map(TaskName("Partition 0") -> Map(kafka/orders/0 -> 42))
 * }}}
 */
final case class QueryCheckpoint(
    location: String,
    committed: Option[QueryCheckpoint.Batch],
    pending: Option[QueryCheckpoint.Batch]
) {

  /**
   * The batch whose end the query goes on reading from when it restarts: the pending batch if there
   * is one (Spark replays it, to the end positions it logged, before it plans anything new), else
   * the last committed one.
   */
  def resumesAfter: Option[QueryCheckpoint.Batch] = pending.orElse(committed)
}

object QueryCheckpoint {

  /**
   * One batch of the offset log: its end positions per streamctl source id (`sources/<id>`, the id
   * [[streamctl.metadata.StoreLayout.Source]] keys that source's entries of the store by).
   */
  final case class Batch(
      batchId: Long,
      timestampMs: Long,
      watermarkMs: Long,
      sources: Map[String, SourcePosition]
  )

  /**
   * Reads the checkpoint at `location`. A path that holds no query checkpoint (no offset log) is an
   * error saying so, unless `allowEmpty` (a query that has not run its first batch).
   */
  def read(location: String, hadoopConf: Configuration): QueryCheckpoint = {
    val root = new Path(location)
    val fs = root.getFileSystem(hadoopConf)
    val offsets = batches(fs, new Path(root, "offsets"))
    val commits = batches(fs, new Path(root, "commits")).toSet
    val committedId = offsets.filter(commits.contains).maxOption
    val pendingId = offsets.maxOption.filter(id => !committedId.contains(id))
    def batch(id: Long): Batch =
      parseBatch(readText(fs, new Path(root, s"offsets/$id")), s"$location/offsets/$id", id)
    QueryCheckpoint(location, committedId.map(batch), pendingId.map(batch))
  }

  /**
   * The query's id: Spark keeps it in the checkpoint's `metadata` file for every run of the query
   * (the run id changes, this one does not).
   */
  def queryId(location: String, hadoopConf: Configuration): String = {
    val path = new Path(new Path(location), "metadata")
    val fs = path.getFileSystem(hadoopConf)
    if (!fs.exists(path)) throw StreamctlException(
      s"No Spark query checkpoint at $location: it has no metadata file (give the query's checkpointLocation)"
    )
    Json.field(Json.parse(readText(fs, path).linesIterator.next(), s"$path"), "id", s"$path").asText
  }

  /** True when `location` holds a Spark query checkpoint (its `offsets` or `metadata`). */
  def exists(location: String, hadoopConf: Configuration): Boolean = {
    val root = new Path(location)
    val fs = root.getFileSystem(hadoopConf)
    fs.exists(new Path(root, "offsets")) || fs.exists(new Path(root, "metadata"))
  }

  private[ops] def parseBatch(text: String, what: String, batchId: Long): Batch = {
    val lines = text.linesIterator.toVector
    if (lines.isEmpty || !lines.head.startsWith("v"))
      throw StreamctlException(s"$what is not a Spark offset log file (no version line)")
    val meta = lines.lift(1).map(Json.parse(_, s"the metadata line of $what"))
    def metaLong(name: String): Long =
      meta.flatMap(m => Option(m.get(name))).map(_.asLong).getOrElse(0L)
    val offsets: Seq[(String, String)] = lines.head.trim match {
      case "v1" => lines.drop(2).zipWithIndex.map { case (line, i) => i.toString -> line }
      case "v2" => lines.drop(2).map { line =>
          // Spark splits at the first ':' too: a source id has none, an offset's JSON does.
          val colon = line.indexOf(':')
          if (colon < 0) throw StreamctlException(
            s"$what: source line '$line' has no '<source id>:' prefix, which offset log format v2 requires"
          )
          line.take(colon) -> line.drop(colon + 1)
        }
      case other => throw StreamctlException(
          s"$what is offset log format '$other', which this streamctl cannot read (it reads v1 and v2)"
        )
    }
    val sources = offsets.collect {
      case (id, offset) if isStreamctl(offset) =>
        try id -> SourceStates.parse(offset)
        catch {
          case e: StreamctlException =>
            throw StreamctlException(s"$what, source $id: ${e.getMessage}", e)
        }
    }.toMap
    Batch(batchId, metaLong("batchTimestampMs"), metaLong("batchWatermarkMs"), sources)
  }

  /* A streamctl offset is an object with a numeric "version" and its positions; Kafka's is a map of
   * topics. */
  private def isStreamctl(line: String): Boolean =
    line.trim.startsWith("{") && Try(Json.parse(line, "an offset")).toOption.exists(n =>
      n.path("version").isIntegralNumber && (n.has("tasks") || n.has("next") || n.has("state"))
    )

  private def batches(fs: FileSystem, dir: Path): Seq[Long] =
    if (!fs.exists(dir)) Seq.empty
    else fs.listStatus(dir).toSeq.map(_.getPath.getName).flatMap(_.toLongOption)

  private def readText(fs: FileSystem, path: Path): String = {
    val in = fs.open(path)
    try new String(in.readAllBytes(), StandardCharsets.UTF_8)
    finally in.close()
  }
}
