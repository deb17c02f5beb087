package streamctl.metadata

import java.nio.charset.StandardCharsets

import streamctl.StreamctlException

/**
 * The rules every [[MetadataStore]] applies to namespaces and keys, and the reversible
 * file-name encoding of keys used by the file system store.
 *
 * A namespace is one plain name (`startpoints`, `grouper`); a key is any non-empty text
 * without control characters (`kafka/orders/3/Partition 3` is fine). The in-memory store
 * applies the same rules so that a key accepted in a unit test is accepted on HDFS too.
 *
 * {{{
 * StoreKeys.encode("kafka/orders/3/Partition 3") // "kafka%2Forders%2F3%2FPartition%203"
 * StoreKeys.decode("kafka%2Forders%2F3")          // Some("kafka/orders/3")
 * }}}
 */
object StoreKeys {
  private val NamespacePattern = "[A-Za-z0-9][A-Za-z0-9_-]{0,99}".r

  /** File name limit of local file systems and HDFS is 255 bytes; leave room for ".json". */
  val MaxEncodedKeyLength = 250

  def validateNamespace(namespace: String): Unit =
    if (namespace == null || !NamespacePattern.matches(namespace))
      throw StreamctlException(
        s"Invalid metadata store namespace '$namespace': use 1 to 100 letters, digits, '_' or '-', starting with a letter or digit")

  def validateKey(namespace: String, key: String): Unit = {
    if (key == null || key.isEmpty)
      throw StreamctlException(s"Invalid metadata store key in namespace '$namespace': the key is empty")
    if (key.exists(Character.isISOControl))
      throw StreamctlException(s"Invalid metadata store key '${printable(key)}' in namespace '$namespace': it contains control characters")
    if (encode(key).length > MaxEncodedKeyLength)
      throw StreamctlException(
        s"Invalid metadata store key '$key' in namespace '$namespace': too long (at most $MaxEncodedKeyLength characters once encoded)")
  }

  /**
   * Percent-encodes every byte except ASCII letters, digits, '_' and '-'. Stricter than
   * URLEncoder on purpose: no '+' for space (ambiguous when decoded by other tools), no '.'
   * (a key "." or ".x" must not become a hidden or temp-looking file name), no ':' (Hadoop
   * `Path` would read it as a URI scheme).
   */
  def encode(key: String): String = {
    val sb = new java.lang.StringBuilder(key.length + 8)
    for (b <- key.getBytes(StandardCharsets.UTF_8)) {
      val c = (b & 0xff).toChar
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') sb.append(c)
      else sb.append('%').append(Hex((b >> 4) & 0xf)).append(Hex(b & 0xf))
    }
    sb.toString
  }

  /** Inverse of [[encode]]; None for a name [[encode]] cannot have produced (a stray file). */
  def decode(name: String): Option[String] = {
    val out = new java.io.ByteArrayOutputStream(name.length)
    var i = 0
    while (i < name.length) {
      val c = name.charAt(i)
      if (c == '%') {
        if (i + 2 >= name.length) return None
        val hi = Character.digit(name.charAt(i + 1), 16)
        val lo = Character.digit(name.charAt(i + 2), 16)
        if (hi < 0 || lo < 0) return None
        out.write((hi << 4) | lo)
        i += 3
      } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
        out.write(c.toInt)
        i += 1
      } else return None
    }
    val key = new String(out.toByteArray, StandardCharsets.UTF_8)
    // Reject names that are not canonical (e.g. "%41" for "A", or invalid UTF-8): the
    // same key must always map to the same file, or keys() could list a key twice.
    if (key.nonEmpty && encode(key) == name) Some(key) else None
  }

  private val Hex = "0123456789ABCDEF".toCharArray

  private def printable(s: String): String =
    s.flatMap(c => if (Character.isISOControl(c)) f"\\u${c.toInt}%04x" else c.toString)
}
