package streamctl.spark

import org.apache.hadoop.fs.Path

import streamctl.metadata.MetadataStore

/**
 * Where a query's metadata store lives: `metadata.store.path` when given, else
 * `<query checkpoint>/streamctl`, beside the offset and commit logs, so that copying or
 * deleting a checkpoint takes its startpoints and task mapping along.
 */
object MetadataLocation {
  val DirName: String = MetadataStore.CheckpointSubdir

  /** `sourceCheckpoint` is what Spark hands a source: `<query checkpoint>/sources/<n>`. */
  def resolve(explicit: Option[String], sourceCheckpoint: String): String =
    explicit.getOrElse(MetadataStore.locationFor(queryCheckpoint(sourceCheckpoint)))

  def queryCheckpoint(sourceCheckpoint: String): String = {
    val p = new Path(sourceCheckpoint)
    if (p.getParent != null && p.getParent.getName == "sources") p.getParent.getParent.toString else p.toString
  }

  /** The source's index inside its query (`sources/<n>`), used to namespace per-source keys. */
  def sourceId(sourceCheckpoint: String): String = new Path(sourceCheckpoint).getName
}
