package streamctl.planner

import streamctl.metadata.{MetadataStore, StoreLayout}
import streamctl.plan.SourcePosition

/**
 * The first position of a query, written once beside the source's checkpoint
 * ([[StoreLayout.InitialOffset]]). Spark plans batch 0 from `initialOffset()`, and calls it again
 * when it replays an uncommitted batch 0 after a crash; with `startingOffsets=latest` a recomputed
 * value would be the broker's head at the restart, so the replay would skip what batch 0 had read.
 * Reading it back from here makes batch 0 replay like every other batch.
 *
 * {{{
 * new InitialOffset(() => new FileSystemMetadataStore(sourceCheckpoint, conf)).getOrCreate(computeFromBroker())
 * }}}
 *
 * @param store
 *   opens the store rooted at the source's checkpoint; closed after use
 */
final class InitialOffset(store: () => MetadataStore) {
  def getOrCreate(compute: => SourcePosition): SourcePosition = {
    val (namespace, key) = StoreLayout.InitialOffset
    val s = store()
    try s.get(namespace, key) match {
        case Some(json) => SourceStates.parse(json)
        case None =>
          val position = compute
          s.put(namespace, key, position.json)
          position
      }
    finally s.close()
  }
}
