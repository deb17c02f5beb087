package streamctl

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * One shared Jackson mapper (Spark ships Jackson, so nothing is bundled for it) and
 * small helpers that turn malformed input into errors naming where it came from.
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
        throw StreamctlException(s"Malformed JSON in $what: ${e.getMessage.linesIterator.nextOption().getOrElse("")}", e)
    }

  def write(node: JsonNode): String = mapper.writeValueAsString(node)

  /** A required field, or an error naming the field and the origin. */
  def field(node: JsonNode, name: String, what: String): JsonNode = {
    val f = node.get(name)
    if (f == null || f.isNull) throw StreamctlException(s"Missing field '$name' in $what")
    f
  }
}
