package streamctl
package metadata

import org.apache.hadoop.fs.Path

/**
 * Where a query's metadata store is, and how everything in it is named: the one place that knows
 * the layout, for the source that writes it and for the tools that read it.
 *
 * {{{
 * <query checkpoint>/streamctl/                 the store (or option metadata.store.path)
 *   startpoints/<system>/<stream>/<p>[/<task>]  startpoints, written by users (StartpointKey)
 *   grouper/mapping-<source>                    the SSP -> task mapping of source <source>
 *   locality/assignment-<source>                its task -> executor assignment
 *   control-<source>/<seq>                      the readers' control results of micro-batch <seq>
 *   control-<source>/<seq>/<task>               a real-time reader's of batch <seq>
 *   progress/history-<source>/<batch>           its recent batches, one each, for `streamctl report`
 * <query checkpoint>/sources/<source>/          what Spark hands the source: its checkpoint
 *   streamctl/initial-offset                    the query's first offset
 * }}}
 * `<source>` is the source's id in its query, the last part of the `sources/<id>` path Spark hands
 * it: its index, or its name when the query names its sources (Spark 4.3 source evolution; names
 * are letters, digits and `_`), the same id Spark's offset log v2 writes. Two streamctl sources of
 * one query keep apart by it. Keeping the store inside the checkpoint means that copying or
 * deleting a checkpoint takes its startpoints, task mapping and locality along.
 *
 * {{{
 * StoreLayout.ofQuery("/chk/q1")                        // "/chk/q1/streamctl"
 * StoreLayout.ofSource(None, "/chk/q1/sources/0")       // "/chk/q1/streamctl"
 * StoreLayout.locate(Some("/chk/q1"), Some("/meta/q1"))  // Some("/meta/q1")
 * StoreLayout.Source("0").mappingKey                    // "mapping-0"
 * }}}
 */
object StoreLayout {

  /**
   * Subdirectory of the query checkpoint holding the store; Spark ignores unknown entries there.
   */
  val CheckpointSubdir = "streamctl"

  val StartpointsNamespace = "startpoints"
  val MappingNamespace = "grouper"
  val LocalityNamespace = "locality"
  val ProgressNamespace = "progress"

  /**
   * The startpoints a source resolved for a batch not logged yet (one key per source): real-time
   * mode logs a batch only as it ends, so a run that dies within it resolves them again at the next
   * start unless it finds them here.
   */
  val ResolvedNamespace = "resolved"

  private val MappingPrefix = "mapping-"
  private val LocalityPrefix = "assignment-"

  /** The store of a query with this checkpoint location. */
  def ofQuery(checkpointLocation: String): String =
    checkpointLocation.stripSuffix("/") + "/" + CheckpointSubdir

  /** The store of a source: `metadata.store.path` when given, else its query's ([[ofQuery]]). */
  def ofSource(metadataStorePath: Option[String], sourceCheckpoint: String): String =
    locate(Some(queryCheckpoint(sourceCheckpoint)), metadataStorePath).get

  /**
   * The store of a query as its tools know it, by the source's own rule ([[ofSource]]): its
   * `metadata.store.path` when given, else the one in its checkpoint; None when neither is given.
   */
  def locate(
      checkpointLocation: Option[String],
      metadataStorePath: Option[String]
  ): Option[String] =
    metadataStorePath.orElse(checkpointLocation.map(ofQuery))

  /** The source's id inside its query: the last part of `<query checkpoint>/sources/<id>`. */
  def sourceId(sourceCheckpoint: String): String = new Path(sourceCheckpoint).getName

  private def queryCheckpoint(sourceCheckpoint: String): String = {
    val p = new Path(sourceCheckpoint)
    if (p.getParent != null && p.getParent.getName == "sources") p.getParent.getParent.toString
    else p.toString
  }

  /** The keys one source writes. */
  final case class Source(id: String) {
    def mappingKey: String = MappingPrefix + id
    def localityKey: String = LocalityPrefix + id
    def resolvedKey: String = s"source-$id"
    def controlNamespace: String = s"control-$id"

    /** The progress history's entry of one batch (zero-padded, so keys sort by batch). */
    def progressKey(batchId: Long): String = f"history-$id/$batchId%019d"

    /** The batch whose entry `key` is, if it is one of this source's. */
    def progressBatch(key: String): Option[Long] =
      Some(
        key
      ).filter(_.startsWith(s"history-$id/")).flatMap(_.stripPrefix(s"history-$id/").toLongOption)

    /** Where streamctl kept a source's whole history in one value before. */
    def legacyProgressKey: String = s"history-$id"
  }

  /**
   * The source whose mapping is stored under `key` (namespace [[MappingNamespace]]), if it is one.
   */
  def mappingSource(key: String): Option[String] =
    Some(key).filter(_.startsWith(MappingPrefix)).map(_.stripPrefix(MappingPrefix))

  /**
   * The source whose progress history is stored under `key` (namespace [[ProgressNamespace]]), if
   * it is one.
   */
  def progressSource(key: String): Option[String] =
    Some(key).filter(_.startsWith("history-")).map(_.stripPrefix("history-").takeWhile(_ != '/'))

  /**
   * The source whose locality is stored under `key` (namespace [[LocalityNamespace]]), if it is
   * one.
   */
  def localitySource(key: String): Option[String] =
    Some(key).filter(_.startsWith(LocalityPrefix)).map(_.stripPrefix(LocalityPrefix))

  /**
   * Where the first offset of a source is kept: (namespace, key) in a store rooted at the source's
   * checkpoint.
   */
  val InitialOffset: (String, String) = ("streamctl", "initial-offset")
}
