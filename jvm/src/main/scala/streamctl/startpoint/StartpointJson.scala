package streamctl.startpoint

import com.fasterxml.jackson.databind.JsonNode

import streamctl.{Json, StreamctlException}

/**
 * The stored form of a startpoint: a JSON object with `type`, `creationTime` (epoch ms), `version`
 * and the type's own fields.
 *
 * {{{
 * StartpointJson.write(Startpoint.Specific(42, 1700000000000L))
 * // {"version":1,"type":"specific","creationTime":1700000000000,"offset":42}
 * StartpointJson.read(text, what = "metadata store key 'kafka/orders/3'")
 * }}}
 *
 * Reading is strict: an unknown type, a newer version, a missing or mistyped field is an error
 * naming `what`, never a guess, because a wrong guess moves a query's offsets.
 */
object StartpointJson {
  val Version = 1

  def write(startpoint: Startpoint): String = {
    val node = Json.obj()
    node.put("version", Version)
    val fields = startpoint.fields
    node.put("type", fields.typeName)
    node.put("creationTime", startpoint.creationTimeMs)
    fields.offset.foreach(node.put("offset", _))
    fields.timestampMs.foreach(node.put("timestamp", _))
    fields.kind.foreach(node.put("kind", _))
    fields.payload.foreach(node.put("payload", _))
    Json.write(node)
  }

  /** Parses a stored startpoint; `what` names its origin (a store key) in every error. */
  def read(text: String, what: String): Startpoint = {
    val node = Json.parse(text, what)
    if (!node.isObject) throw StreamctlException(
      s"Corrupt startpoint in $what: expected a JSON object, got '${abbreviate(text)}'"
    )
    try {
      Json.version(node, Version, what)
      val created = long(node, "creationTime", what)
      // Every field is read whatever the type, so that one mistyped is refused, not ignored.
      def optional[T](name: String, as: (JsonNode, String, String) => T): Option[T] =
        Option(node.get(name)).filterNot(_.isNull).map(as(_, name, what))
      Startpoint.restore(
        string(node, "type", what),
        optional("offset", asLong).map(Long.box).orNull,
        optional("timestamp", asLong).map(Long.box).orNull,
        optional("kind", asString).orNull,
        optional("payload", asString).orNull,
        created
      )
    } catch {
      // A field that parses but breaks a constructor rule (negative offset) is corruption too.
      case e: StreamctlException if !e.getMessage.contains(what) =>
        throw StreamctlException(s"Corrupt startpoint in $what: ${e.getMessage}", e)
    }
  }

  private def long(node: JsonNode, name: String, what: String): Long =
    asLong(Json.field(node, name, what), name, what)

  private def string(node: JsonNode, name: String, what: String): String =
    asString(Json.field(node, name, what), name, what)

  private def asLong(f: JsonNode, name: String, what: String): Long = {
    if (!f.isIntegralNumber || !f.canConvertToLong)
      throw StreamctlException(
        s"Corrupt startpoint in $what: field '$name' must be a whole number, got ${f.toString}"
      )
    f.asLong
  }

  private def asString(f: JsonNode, name: String, what: String): String = {
    if (!f.isTextual) throw StreamctlException(
      s"Corrupt startpoint in $what: field '$name' must be a string, got ${f.toString}"
    )
    f.asText
  }

  private def abbreviate(s: String): String = if (s.length <= 80) s else s.take(77) + "..."
}
