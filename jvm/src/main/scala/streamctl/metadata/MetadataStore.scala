package streamctl.metadata

/**
 * A small key-value store for startpoints, the SSP -> task mapping and task locality.
 * Values are JSON strings; keys live in namespaces (`startpoints`, `grouper`, `locality`, ...).
 * Writes are atomic: a reader sees the old value or the new one, never a torn one.
 *
 * {{{
 * store.put("startpoints", "kafka/orders/3", """{"type":"oldest"}""")
 * store.get("startpoints", "kafka/orders/3") // Some(...)
 * }}}
 */
trait MetadataStore extends AutoCloseable {
  def get(namespace: String, key: String): Option[String]
  def put(namespace: String, key: String, value: String): Unit
  def delete(namespace: String, key: String): Unit
  /** Keys of a namespace, sorted. */
  def keys(namespace: String): Seq[String]
  override def close(): Unit = ()
}
