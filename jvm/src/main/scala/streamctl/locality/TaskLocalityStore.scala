package streamctl.locality

import streamctl.metadata.MetadataStore

/**
 * Keeps one query's [[TaskLocality]] in its metadata store, as one value, so a reader never
 * sees half of an assignment.
 *
 * {{{
 * val locality = new TaskLocalityStore(store)
 * val next = StickyAssigner.assign(locality.load(), tasks, executors)
 * locality.save(next.locality)
 * }}}
 */
final class TaskLocalityStore(store: MetadataStore, key: String = TaskLocalityStore.DefaultKey) {
  /** The stored locality, or an empty one for a query that never had one. */
  def load(): TaskLocality =
    store.get(TaskLocalityStore.Namespace, key)
      .map(TaskLocality.fromJson(_, s"${TaskLocalityStore.Namespace}/$key"))
      .getOrElse(TaskLocality.empty)

  def save(locality: TaskLocality): Unit = store.put(TaskLocalityStore.Namespace, key, locality.toJson)
}

object TaskLocalityStore {
  val Namespace = "locality"
  val DefaultKey = "assignment"
}
