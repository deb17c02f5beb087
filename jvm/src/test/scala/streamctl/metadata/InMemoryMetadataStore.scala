package streamctl.metadata

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

/**
 * A [[MetadataStore]] in the heap of one JVM, for unit tests of other packages and for benchmarks.
 * It validates namespaces and keys exactly like the file system store, so code tested against it
 * does not fail later on HDFS. Thread-safe.
 *
 * {{{
 * val store = new InMemoryMetadataStore
 * store.put("grouper", "kafka/orders/0", """{"task":"Partition 0"}""")
 * store.keys("grouper") // Seq("kafka/orders/0")
 * }}}
 */
class InMemoryMetadataStore extends MetadataStore {
  // Hash maps, sorted only when listed: fan-out of a broadcast stream does hundreds of
  // thousands of gets, puts and deletes per listing, and sorted maps made those the cost.
  private val namespaces = new ConcurrentHashMap[String, ConcurrentHashMap[String, String]]()

  private def ns(namespace: String): ConcurrentHashMap[String, String] =
    namespaces.computeIfAbsent(namespace, _ => new ConcurrentHashMap[String, String]())

  override def get(namespace: String, key: String): Option[String] = {
    StoreKeys.validateNamespace(namespace)
    StoreKeys.validateKey(namespace, key)
    Option(ns(namespace).get(key))
  }

  override def put(namespace: String, key: String, value: String): Unit = {
    StoreKeys.validateNamespace(namespace)
    StoreKeys.validateKey(namespace, key)
    if (value == null) throw streamctl.StreamctlException(
      s"Null value for metadata store key '$key' in namespace '$namespace'"
    )
    ns(namespace).put(key, value)
  }

  override def delete(namespace: String, key: String): Unit = {
    StoreKeys.validateNamespace(namespace)
    StoreKeys.validateKey(namespace, key)
    ns(namespace).remove(key)
  }

  override def keys(namespace: String): Seq[String] = {
    StoreKeys.validateNamespace(namespace)
    ns(namespace).keySet().asScala.toVector.sorted
  }

  override def toString: String = "InMemoryMetadataStore"
}
