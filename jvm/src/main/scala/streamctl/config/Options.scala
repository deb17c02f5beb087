package streamctl.config

import streamctl.StreamctlException

/**
 * The options of one source or sink as the user gave them, read through the specs.
 *
 * {{{
 * options.get(MaxRecords)               // Option[Long], checked
 * options(FailOnDataLoss)               // the value, or the spec's default
 * options.streams(Bootstrap, streams)   // per stream, checked against the query's streams
 * options.canonical                     // what a user's class receives
 * }}}
 */
final class Options private[config] (val raw: Map[String, String], set: OptionSet) {
  import OptionSet._

  /** (canonical key, key as written) of every option given. */
  private[config] val keys: Seq[(String, String)] =
    raw.keys.toSeq.sorted.map(k => OptionSet.canonical(k) -> k)

  private val bySpecName: Map[String, (String, String)] = keys.flatMap { case (c, k) =>
    set.specOf(c).map(s => s.name -> (k -> raw(k)))
  }.toMap

  /**
   * Every option in canonical form: what a user's class is constructed with. An option given under
   * an alias appears under its spec's name (`streams` as `subscribe`), so a class reads one key
   * whichever spelling the user wrote.
   */
  lazy val canonical: Map[String, String] =
    keys.map { case (c, k) => set.specOf(c).fold(c)(_.names.head) -> raw(k) }.toMap

  /**
   * `spec`'s name as the user wrote it (an alias, another case), else its own: what an error about
   * it says.
   */
  def nameOf(spec: OptionSpec[_]): String = bySpecName.get(spec.name).fold(spec.name)(_._1)

  /** The value of `spec`, read with its parser; None when not given. */
  def get[T](spec: OptionSpec[T]): Option[T] = bySpecName.get(spec.name).map { case (k, v) =>
    spec.parse(k, v)
  }

  /** The value of `spec`, or its default; an error naming it when it has none. */
  def apply[T](spec: OptionSpec[T]): T = get(spec).orElse(spec.default).getOrElse(
    throw StreamctlException(s"Option '${spec.name}' is required: ${spec.doc}")
  )

  /**
   * `property` of each stream that sets it, by stream name as written, before the streams read are
   * known (unchecked: [[streams]] checks them).
   */
  def anyStreams[T](property: StreamProperty[T]): Map[String, T] =
    keys.flatMap { case (c, k) =>
      streamKey(c).filter(_._2 == property.property).map { case (s, _) =>
        s -> property.parse(k, raw(k))
      }
    }.toMap

  /**
   * `property` of each stream that sets it, by stream name as written. A stream that is not one of
   * `streams` is an error: the setting would do nothing.
   */
  def streams[T](property: StreamProperty[T], streams: Seq[String]): Map[String, T] =
    keys.flatMap { case (c, k) =>
      streamKey(c).filter(_._2 == property.property).map { case (stream, _) =>
        if (!streams.contains(stream)) throw StreamctlException(
          s"Option '$k' names stream '$stream', which the query does not read (option 'subscribe' or 'assign') (${streams.mkString(", ")})"
        )
        stream -> property.parse(k, raw(k))
      }
    }.toMap

  /** Whether `spec` was given, under any of its names. */
  def isSet(spec: OptionSpec[_]): Boolean = bySpecName.contains(spec.name)

  /** The stream names of every `stream.<name>.<property>` option given, as written. */
  def streamNames: Seq[String] = keys.flatMap { case (c, _) => streamKey(c).map(_._1) }.distinct

  /** Checks that every `stream.<name>.*` option names one of `streams`. */
  def checkStreamNames(streams: Seq[String]): Unit =
    set.streamProperties.foreach(p => this.streams(p, streams))

  /**
   * The options starting with `prefix` (case-insensitively), the prefix removed, the rest as
   * [[OptionSet.canonical]] spells it.
   */
  def withPrefix(prefix: String): Map[String, String] = keys.collect {
    case (c, k) if c.startsWith(prefix) => c.substring(prefix.length) -> raw(k)
  }.toMap
}
