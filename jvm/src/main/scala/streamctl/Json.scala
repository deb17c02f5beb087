package streamctl

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * One shared Jackson mapper (Spark ships Jackson, so nothing is bundled for it) and small helpers
 * that turn malformed input into errors naming where it came from.
 *
 * {{{
 * val node = Json.parse(text, what = "startpoint kafka/orders/3")
 * }}}
 */
object Json {
  val mapper: ObjectMapper = new ObjectMapper()

  def obj(): ObjectNode = mapper.createObjectNode()

  /** Parses `text`; `what` names its origin in the error (a store key, an SSP and offset). */
  def parse(text: String, what: String): JsonNode =
    try {
      val node = mapper.readTree(text)
      if (node == null || node.isMissingNode) throw StreamctlException(s"Empty JSON in $what")
      node
    } catch {
      case e: StreamctlException => throw e
      case e: Exception =>
        throw StreamctlException(
          s"Malformed JSON in $what: ${e.getMessage.linesIterator.nextOption().getOrElse("")}",
          e
        )
    }

  def write(node: JsonNode): String = mapper.writeValueAsString(node)

  /**
   * The format version of `node` (its field `version`, a whole number from 1), checked against
   * `known`, the newest this streamctl reads: the one check of every versioned format, so that what
   * a newer streamctl wrote is refused naming `what`, never guessed at.
   *
   * {{{
   * Json.version(Json.parse("""{"version":2}""", "task mapping 'm'"), known = 1, "task mapping 'm'")
   * // StreamctlException: task mapping 'm' has version 2, newer than this streamctl reads (up to 1): upgrade streamctl
   * }}}
   */
  def version(node: JsonNode, known: Int, what: String): Int = {
    val v = field(node, "version", what)
    if (!v.isIntegralNumber || !v.canConvertToInt || v.asInt < 1)
      throw StreamctlException(s"The 'version' of $what must be a whole number from 1, not $v")
    if (v.asInt > known)
      throw StreamctlException(
        s"$what has version ${v.asInt}, newer than this streamctl reads (up to $known): upgrade streamctl"
      )
    v.asInt
  }

  /** A required field, or an error naming the field and the origin. */
  def field(node: JsonNode, name: String, what: String): JsonNode = {
    val f = node.get(name)
    if (f == null || f.isNull) throw StreamctlException(s"Missing field '$name' in $what")
    f
  }
}
