package streamctl.metadata

import java.util.concurrent.{ConcurrentHashMap, ConcurrentSkipListMap}

import scala.jdk.CollectionConverters._

/**
 * A [[MetadataStore]] in the heap of one JVM, for unit tests of other packages and for
 * benchmarks. It validates namespaces and keys exactly like the file system store, so code
 * tested against it does not fail later on HDFS. Thread-safe.
 *
 * {{{
 * val store = new InMemoryMetadataStore
 * store.put("grouper", "kafka/orders/0", """{"task":"Partition 0"}""")
 * store.keys("grouper") // Seq("kafka/orders/0")
 * }}}
 */
class InMemoryMetadataStore extends MetadataStore {
  // Skip-list maps keep each namespace sorted, so keys() costs no sort on large namespaces.
  private val namespaces = new ConcurrentHashMap[String, ConcurrentSkipListMap[String, String]]()

  private def ns(namespace: String): ConcurrentSkipListMap[String, String] =
    namespaces.computeIfAbsent(namespace, _ => new ConcurrentSkipListMap[String, String]())

  override def get(namespace: String, key: String): Option[String] = {
    StoreKeys.validateNamespace(namespace)
    StoreKeys.validateKey(namespace, key)
    Option(ns(namespace).get(key))
  }

  override def put(namespace: String, key: String, value: String): Unit = {
    StoreKeys.validateNamespace(namespace)
    StoreKeys.validateKey(namespace, key)
    if (value == null) throw streamctl.StreamctlException(s"Null value for metadata store key '$key' in namespace '$namespace'")
    ns(namespace).put(key, value)
  }

  override def delete(namespace: String, key: String): Unit = {
    StoreKeys.validateNamespace(namespace)
    StoreKeys.validateKey(namespace, key)
    ns(namespace).remove(key)
  }

  override def keys(namespace: String): Seq[String] = {
    StoreKeys.validateNamespace(namespace)
    ns(namespace).keySet().asScala.toVector
  }

  override def toString: String = "InMemoryMetadataStore"
}
