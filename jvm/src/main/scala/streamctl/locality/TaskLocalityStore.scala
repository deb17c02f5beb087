package streamctl.locality

import org.slf4j.LoggerFactory

import streamctl.StreamctlException
import streamctl.metadata.{MetadataStore, StoreLayout}

/**
 * Keeps one query's [[TaskLocality]] in its metadata store, as one value, so a reader never sees
 * half of an assignment.
 *
 * {{{
 * val locality = new TaskLocalityStore(store, StoreLayout.Source("0").localityKey)
 * val next = StickyAssigner.assign(locality.loadPreference(), tasks, executors)
 * locality.save(next.locality)
 * }}}
 */
final class TaskLocalityStore(store: MetadataStore, key: String) {
  private val Namespace = StoreLayout.LocalityNamespace

  /**
   * The stored locality, or an empty one for a query that never had one; an error naming the key
   * when it cannot be read.
   */
  def load(): TaskLocality = store.get(Namespace, key).map(parse).getOrElse(TaskLocality.empty)

  /**
   * [[load]] for planning. Locality is only a preference, so a stored value that cannot be read
   * (damaged, truncated, from a newer version) is empty, with a WARN naming where it is, instead of
   * failing every batch and every restart; the next [[save]] replaces it. A store that cannot be
   * reached still fails: saving would fail too.
   */
  def loadPreference(): TaskLocality = store.get(Namespace, key) match {
    case None => TaskLocality.empty
    case Some(text) =>
      try parse(text)
      catch {
        case e: StreamctlException =>
          TaskLocalityStore.log.warn(
            s"The task locality at ${store.describe(Namespace, key)} cannot be read (${e.getMessage}); " +
              "tasks are assigned to executors afresh and it is replaced when the assignment is saved"
          )
          TaskLocality.empty
      }
  }

  def save(locality: TaskLocality): Unit = store.put(Namespace, key, locality.toJson)

  private def parse(text: String): TaskLocality = TaskLocality.fromJson(text, s"$Namespace/$key")
}

object TaskLocalityStore {
  private val log = LoggerFactory.getLogger(classOf[TaskLocalityStore])
}
