package streamctl.metadata

/**
 * A small key-value store for startpoints, the SSP -> task mapping and task locality. Values are
 * JSON strings; keys live in namespaces (`startpoints`, `grouper`, `locality`, ...). Writes are
 * atomic: a reader sees the old value or the new one, never a torn one (the default store keeps
 * that on all but some object stores: see [[FileSystemMetadataStore]]).
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

  /** Where the value of `key` lives, for messages (a file path for the default store). */
  def describe(namespace: String, key: String): String =
    s"key '$key' of metadata store namespace '$namespace'"
  override def close(): Unit = ()
}

/**
 * Opens the default store; where a query's store is says [[StoreLayout]].
 *
 * {{{
 * val store = MetadataStore.open(StoreLayout.ofQuery("/chk/q1"), hadoopConf)
 * }}}
 */
object MetadataStore {

  /** A [[FileSystemMetadataStore]] at `uri`; nothing is written until the first put. */
  def open(uri: String, hadoopConf: org.apache.hadoop.conf.Configuration): FileSystemMetadataStore =
    new FileSystemMetadataStore(uri, hadoopConf)
}
