package streamctl.spark

import org.apache.hadoop.conf.Configuration

import streamctl.metadata.{FileSystemMetadataStore, StoreLayout}

/**
 * The first offset of a query, written once beside the source's checkpoint. Spark plans
 * batch 0 from `initialOffset()`, and calls it again when it replays an uncommitted batch 0
 * after a crash; with `starting.offsets=latest` a recomputed value would be the broker's
 * head at the restart, so the replay would skip what batch 0 had read. Reading it back from
 * here makes batch 0 replay like every other batch.
 *
 * {{{
 * InitialOffset(sourceCheckpoint, conf).getOrCreate(computeFromBroker())
 * }}}
 */
final case class InitialOffset(sourceCheckpoint: String, hadoopConf: Configuration) {
  private val (namespace, key) = StoreLayout.InitialOffset

  def getOrCreate(compute: => SourceOffset): SourceOffset = {
    val store = new FileSystemMetadataStore(sourceCheckpoint, hadoopConf)
    try store.get(namespace, key) match {
      case Some(json) => SourceOffset.parse(json)
      case None =>
        val offset = compute
        store.put(namespace, key, offset.json)
        offset
    } finally store.close()
  }
}
