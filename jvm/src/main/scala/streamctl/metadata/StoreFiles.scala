package streamctl.metadata

/**
 * The file operations [[FileSystemMetadataStore]] needs, on names relative to the store root
 * (`namespace`, `namespace/file`). Two implementations: plain java.nio for local disk, Hadoop for
 * every other scheme. Implementations throw IOException; the store turns it into an error naming
 * the key and path.
 */
private[metadata] trait StoreFiles {

  /** The qualified root, for messages and `location`. */
  def root: String

  /** Where a file is, for error messages. */
  def describe(namespace: String, file: String): String

  def read(namespace: String, file: String): Option[Array[Byte]]

  /**
   * Replaces `file` with `bytes` so that readers see the old or the new content, whole, as far as
   * the file system allows ([[HadoopStoreFiles]] says where it does not).
   */
  def writeAtomically(namespace: String, file: String, bytes: Array[Byte]): Unit

  /** No error when absent. */
  def delete(namespace: String, file: String): Unit

  /** Names of the regular files of a namespace; empty when it does not exist. */
  def list(namespace: String): Seq[String]

  /** Whether the root is a directory: something (a query, a user's startpoint) wrote there. */
  def exists(): Boolean

  /** Creates the root and writes and removes a probe file there. */
  def probe(): Unit
}
