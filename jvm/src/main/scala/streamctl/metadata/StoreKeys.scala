package streamctl.metadata

import java.nio.charset.StandardCharsets

import streamctl.StreamctlException

/**
 * The rules every [[MetadataStore]] applies to namespaces and keys, and the reversible file-name
 * encoding of keys used by the file system store.
 *
 * A namespace is one plain name (`startpoints`, `grouper`); a key is any non-empty text without
 * control characters (`kafka/orders/3/Partition 3` is fine). The in-memory store applies the same
 * rules so that a key accepted in a unit test is accepted on HDFS too.
 *
 * {{{
 * StoreKeys.encode("kafka/orders/3/Partition 3") // "kafka%2Forders%2F3%2FPartition%203"
 * StoreKeys.decode("kafka%2Forders%2F3")          // Some("kafka/orders/3")
 * }}}
 */
object StoreKeys {

  /** File name limit of local file systems and HDFS is 255 bytes; leave room for ".json". */
  val MaxEncodedKeyLength = 250

  // Plain loops rather than a regex: every store operation validates, and fan-out of a
  // broadcast stream does hundreds of thousands of operations.
  def validateNamespace(namespace: String): Unit =
    if (
      namespace == null || namespace.isEmpty || namespace.length > 100 || namespace.charAt(
        0
      ) == '_' || namespace.charAt(0) == '-' ||
      !namespace.forall(isSafe)
    )
      throw StreamctlException(
        s"Invalid metadata store namespace '$namespace': use 1 to 100 letters, digits, '_' or '-', starting with a letter or digit"
      )

  def validateKey(namespace: String, key: String): Unit = {
    if (key == null || key.isEmpty)
      throw StreamctlException(
        s"Invalid metadata store key in namespace '$namespace': the key is empty"
      )
    if (key.exists(Character.isISOControl))
      throw StreamctlException(
        s"Invalid metadata store key '${printable(key)}' in namespace '$namespace': it contains control characters"
      )
    if (hasLoneSurrogate(key))
      throw StreamctlException(
        s"Invalid metadata store key '${printable(key)}' in namespace '$namespace': it is not valid Unicode (lone surrogate)"
      )
    if (encodedLength(key) > MaxEncodedKeyLength)
      throw StreamctlException(
        s"Invalid metadata store key '$key' in namespace '$namespace': too long (at most $MaxEncodedKeyLength characters once encoded)"
      )
  }

  /** `encode(key).length`, without building the string. */
  def encodedLength(key: String): Int = {
    var n = 0
    var i = 0
    while (i < key.length) {
      val c = key.charAt(i)
      n += (if (isSafe(c)) 1
            else if (c < 0x80) 3 else if (c < 0x800) 6 else if (Character.isSurrogate(c)) 6 else 9)
      i += 1
    }
    n
  }

  // A lone surrogate becomes '?' in UTF-8, so two different keys would share one file.
  private def hasLoneSurrogate(key: String): Boolean = {
    var i = 0
    while (i < key.length) {
      val c = key.charAt(i)
      if (
        Character.isHighSurrogate(c) && i + 1 < key.length && Character.isLowSurrogate(
          key.charAt(i + 1)
        )
      ) i += 2
      else if (Character.isSurrogate(c)) return true
      else i += 1
    }
    false
  }

  private def isSafe(c: Char): Boolean =
    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'

  /**
   * Percent-encodes every byte except ASCII letters, digits, '_' and '-'. Stricter than URLEncoder
   * on purpose: no '+' for space (ambiguous when decoded by other tools), no '.' (a key "." or ".x"
   * must not become a hidden or temp-looking file name), no ':' (Hadoop `Path` would read it as a
   * URI scheme).
   */
  def encode(key: String): String = {
    val sb = new java.lang.StringBuilder(key.length + 8)
    for (b <- key.getBytes(StandardCharsets.UTF_8)) {
      val c = (b & 0xff).toChar
      if (isSafe(c)) sb.append(c)
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
      } else if (isSafe(c)) {
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
    s.flatMap(c =>
      if (Character.isISOControl(c) || Character.isSurrogate(c)) f"\\u${c.toInt}%04x"
      else c.toString
    )
}
