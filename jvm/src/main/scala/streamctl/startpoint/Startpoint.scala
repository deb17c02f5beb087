package streamctl
package startpoint

import java.time.Instant

import streamctl.StreamctlException

/**
 * A requested start position for an SSP, or for one task's view of an SSP. It takes precedence over
 * the checkpointed offset the next time the query starts. `creationTimeMs` records when it was
 * requested (shown by `list`, kept in the store).
 *
 * {{{
 * val rewind = Startpoint.timestamp(System.currentTimeMillis() - 3600000L)
 * Startpoint.specific(-1) // StreamctlException: offset must be >= 0
 * }}}
 */
sealed trait Startpoint extends Product with Serializable {
  def creationTimeMs: Long

  /**
   * Its type name (one of [[Startpoint.TypeNames]]) and the fields that type uses, as
   * [[Startpoint.of]] takes them: what the stored form and the procedures' rows show.
   */
  def fields: Startpoint.Fields

  /** Short human form for tables and errors, e.g. `timestamp 2024-05-01T10:00:00Z`. */
  def describe: String
}

object Startpoint {

  /** Start at exactly this offset; it must lie in the partition's [oldest, upcoming]. */
  final case class Specific(offset: Long, creationTimeMs: Long) extends Startpoint {
    if (offset < 0) throw StreamctlException(
      s"Invalid specific startpoint: offset $offset is negative (offsets start at 0)"
    )
    override def describe: String = s"offset $offset"
    override def fields: Fields = Fields("specific", offset = Some(offset))
  }

  /** Start at the first message whose timestamp is >= `epochMs` (the end when none is). */
  final case class Timestamp(epochMs: Long, creationTimeMs: Long) extends Startpoint {
    if (epochMs < 0)
      throw StreamctlException(
        s"Invalid timestamp startpoint: $epochMs ms is negative (before 1970-01-01T00:00:00Z)"
      )
    override def describe: String = s"timestamp ${Instant.ofEpochMilli(epochMs)}"
    override def fields: Fields = Fields("timestamp", timestampMs = Some(epochMs))
  }

  /** Start at the oldest message still on the broker. */
  final case class Oldest(creationTimeMs: Long) extends Startpoint {
    override def describe: String = "oldest"
    override def fields: Fields = Fields("oldest")
  }

  /** Start after the last message: only messages written from now on are read. */
  final case class Upcoming(creationTimeMs: Long) extends Startpoint {
    override def describe: String = "upcoming"
    override def fields: Fields = Fields("upcoming")
  }

  /**
   * A system-specific position, resolved when the query starts by the [[CustomStartpointResolver]]
   * of its `kind` (option `startpoint.resolvers` names them). `payload` is opaque to streamctl
   * (often JSON) and stored verbatim.
   */
  final case class Custom(kind: String, payload: String, creationTimeMs: Long) extends Startpoint {
    if (kind == null || !KindPattern.matches(kind))
      throw StreamctlException(
        s"Invalid custom startpoint kind '$kind': use letters, digits, '.', '_' or '-'"
      )
    if (payload == null)
      throw StreamctlException(s"Invalid custom startpoint of kind '$kind': payload is null")
    override def describe: String = s"custom $kind"
    override def fields: Fields = Fields("custom", kind = Some(kind), payload = Some(payload))
  }

  /** A startpoint's type name and the fields its type uses; the others are None. */
  final case class Fields(
      typeName: String,
      offset: Option[Long] = None,
      timestampMs: Option[Long] = None,
      kind: Option[String] = None,
      payload: Option[String] = None
  )

  private val KindPattern = "[A-Za-z0-9][A-Za-z0-9._-]{0,99}".r

  private def now(): Long = System.currentTimeMillis()

  /**
   * The type names of the stored form and of `CALL streamctl.system.set_startpoint(type => ...)`.
   */
  val TypeNames: Seq[String] = Seq("specific", "timestamp", "oldest", "upcoming", "custom")

  /**
   * A new startpoint of type `typeName` (one of [[TypeNames]]) from the fields that type uses (null
   * when not given): `offset` for specific, `timestampMs` for timestamp, `kind` and `payload` for
   * custom. A missing field or an unknown type is an error naming it.
   */
  def of(
      typeName: String,
      offset: java.lang.Long,
      timestampMs: java.lang.Long,
      kind: String,
      payload: String
  ): Startpoint = restore(
    Option(typeName).map(_.trim.toLowerCase(java.util.Locale.ROOT)).getOrElse(""),
    offset,
    timestampMs,
    kind,
    payload,
    now()
  )

  /**
   * [[of]] for a startpoint read back from the store: `typeName` exactly as stored, and the
   * creation time it was stored with.
   */
  private[startpoint] def restore(
      typeName: String,
      offset: java.lang.Long,
      timestampMs: java.lang.Long,
      kind: String,
      payload: String,
      creationTimeMs: Long
  ): Startpoint = {
    // Typed AnyRef: a Scala Long expected here would turn a null java.lang.Long into 0.
    def need[T <: AnyRef](value: T, field: String): T =
      if (value == null) throw StreamctlException(s"A '$typeName' startpoint needs '$field'")
      else value
    typeName match {
      case "specific" => Specific(need(offset, "offset").longValue, creationTimeMs)
      case "timestamp" => Timestamp(need(timestampMs, "timestamp").longValue, creationTimeMs)
      case "oldest" => Oldest(creationTimeMs)
      case "upcoming" => Upcoming(creationTimeMs)
      case "custom" => Custom(need(kind, "kind"), need(payload, "payload"), creationTimeMs)
      case _ => throw StreamctlException(
          s"Unknown startpoint type '$typeName' (known: ${TypeNames.mkString(", ")})"
        )
    }
  }

  // Explicit overloads rather than default arguments: Java callers cannot use Scala defaults.
  def specific(offset: Long): Specific = Specific(offset, now())
  def timestamp(epochMs: Long): Timestamp = Timestamp(epochMs, now())
  def oldest(): Oldest = Oldest(now())
  def upcoming(): Upcoming = Upcoming(now())
  def custom(kind: String, payload: String): Custom = Custom(kind, payload, now())
}
