package streamctl.locality

import streamctl.metadata.{MetadataStore, StoreLayout}

/**
 * Keeps one query's [[TaskLocality]] in its metadata store, as one value, so a reader never sees
 * half of an assignment.
 *
 * {{{
 * val locality = new TaskLocalityStore(store, StoreLayout.Source("0").localityKey)
 * val next = StickyAssigner.assign(locality.load(), tasks, executors)
 * locality.save(next.locality)
 * }}}
 */
final class TaskLocalityStore(store: MetadataStore, key: String) {

  /** The stored locality, or an empty one for a query that never had one. */
  def load(): TaskLocality =
    store.get(StoreLayout.LocalityNamespace, key)
      .map(TaskLocality.fromJson(_, s"${StoreLayout.LocalityNamespace}/$key"))
      .getOrElse(TaskLocality.empty)

  def save(locality: TaskLocality): Unit =
    store.put(StoreLayout.LocalityNamespace, key, locality.toJson)
}
