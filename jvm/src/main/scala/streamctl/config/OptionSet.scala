package streamctl.config

import java.util.Locale

import org.apache.commons.text.similarity.LevenshteinDistance

import streamctl.StreamctlException

/**
 * Every option of one side of `format("streamctl")` (the source, or the sink), collected from the
 * specs the features declare. [[parse]] checks what the user gave against them at once, so a typo
 * fails the query when it starts instead of doing nothing until production:
 *   - an unknown option is an error naming the nearest known ones ("did you mean");
 *   - `stream.<name>.<property>` must name a known property;
 *   - a user class's own options need the option naming the class;
 *   - an option may be given once, under its name or one alias.
 * Values are read (and checked) by the feature that asks for them, with the spec's parser.
 *
 * Option names are case-insensitive, as Spark's are; stream names are not, like Kafka topics.
 * [[canonical]] is the one place that says how a key is spelled after that.
 *
 * {{{
 * val set = new OptionSet("format(\"streamctl\")", Seq(MaxRecords, FailOnDataLoss), Seq(Bootstrap),
 *   Seq(UserClassOptions("chooser.option.", ChooserClass)), passThrough = Seq("kafka."))
 * val options = set.parse(Map("Max.Records.Per.Batch" -> "100", "stream.Rates.bootstrap" -> "true"))
 * options.get(MaxRecords)                  // Some(100)
 * options.streams(Bootstrap, Seq("Rates")) // Map("Rates" -> true)
 * }}}
 *
 * @param format
 *   how the user names this side in errors
 * @param passThrough
 *   prefixes handed on as they are (`kafka.`: Kafka's clients check those)
 * @param ignored
 *   options Spark itself adds (`path`, `checkpointLocation`)
 * @param refused
 *   options of Spark's Kafka connector that streamctl cannot honour, by name (any case): why, and
 *   what to use instead. Refused rather than ignored, so a job moved from `format("kafka")` never
 *   silently behaves differently.
 */
final class OptionSet(
    val format: String,
    val specs: Seq[OptionSpec[_]],
    val streamProperties: Seq[StreamProperty[_]] = Nil,
    val userClasses: Seq[UserClassOptions] = Nil,
    val passThrough: Seq[String] = Nil,
    val ignored: Set[String] = Set.empty,
    val refused: Map[String, String] = Map.empty
) {
  import OptionSet._

  private val byName: Map[String, OptionSpec[_]] = {
    val all = specs.flatMap(s => s.names.map(_ -> s))
    val dup = all.groupBy(_._1).collect { case (n, xs) if xs.size > 1 => n }
    require(dup.isEmpty, s"options declared twice: ${dup.mkString(", ")}")
    all.toMap
  }
  private val propertyNames: Set[String] = streamProperties.map(_.property).toSet
  private val refusedWhy: Map[String, String] = refused.map { case (k, v) =>
    k.toLowerCase(Locale.ROOT) -> v
  }

  /**
   * Checks `raw` (the options as Spark hands them over) against the specs; see the class comment.
   */
  def parse(raw: Map[String, String]): Options = {
    val options = read(raw)
    raw.keys.toSeq.sorted.foreach { k =>
      val c = canonical(k)
      refusedWhy.get(c.toLowerCase(Locale.ROOT)).foreach(why =>
        throw StreamctlException(
          s"Option '$k' (of Spark's Kafka connector) is not supported by $format: $why"
        )
      )
      if (!isKnown(c)) throw StreamctlException(
        s"Unknown option '$k' for $format. ${suggestion(c)}Known options: " +
          (specs.map(known) ++ passThrough.map(_ + "*") ++ userClasses.map(_.prefix + "*") ++
            (if (streamProperties.isEmpty) Nil else Seq(s"$StreamPrefix<name>.<property>"))).sortBy(
            _.toLowerCase(Locale.ROOT)
          ).mkString(", ")
      )
    }
    options.keys.foreach { case (c, k) =>
      streamKey(c).foreach { case (_, prop) =>
        if (!propertyNames.contains(prop))
          throw StreamctlException(s"Option '$k': unknown stream property '$prop'" +
            s"${nearest(prop, propertyNames.toSeq).fold("")(n => s" (did you mean '$n'?)")} " +
            s"(known: ${propertyNames.toSeq.sorted.mkString(", ")})")
      }
      userClasses.find(u => c.startsWith(u.prefix)).foreach { u =>
        if (options.get(u.owner).isEmpty)
          throw StreamctlException(
            s"Option '$k' is for the class named by option '${u.owner.name}', and '${u.owner.name}' is not set"
          )
      }
    }
    specs.foreach { s =>
      val spelled = options.keys.filter { case (c, _) => s.names.contains(c) }.map(_._2)
      if (spelled.size > 1)
        throw StreamctlException(s"Options ${spelled.sorted.map(g => s"'$g'").mkString(", ")} " +
          s"all set option '${s.name}'; give it once")
    }
    options
  }

  /**
   * `raw` read without checking for unknown options: for a feature's own settings alone, and in
   * tests.
   */
  def read(raw: Map[String, String]): Options = new Options(raw, this)

  private[config] def specOf(canonicalKey: String): Option[OptionSpec[_]] = byName.get(canonicalKey)

  private def isKnown(c: String): Boolean =
    byName.contains(c) || ignored.contains(c) || passThrough.exists(c.startsWith) ||
      userClasses.exists(u => c.startsWith(u.prefix)) || (streamProperties.nonEmpty && streamKey(
        c
      ).isDefined)

  // Every name a suggestion may offer, as declared (the list of known options shows each of them).
  private val declared: Map[String, String] =
    specs.flatMap(s => s.name +: s.aliases).map(n => n.toLowerCase(Locale.ROOT) -> n).toMap

  private def suggestion(c: String): String =
    nearest(c, declared.keys.toSeq).fold("")(n => s"Did you mean '${declared(n)}'? ")

  private def known(s: OptionSpec[_]): String =
    if (s.aliases.isEmpty) s.name else s"${s.name} (alias ${s.aliases.mkString(", ")})"
}

object OptionSet {
  val StreamPrefix = "stream."

  /**
   * The spelling every part of streamctl sees: lower case, except the stream name inside
   * `stream.<name>.<property>`. Kafka's settings (`kafka.*`) too, as Spark's Kafka connector passes
   * them on: `kafka.Isolation.Level` is Kafka's `isolation.level` there, not a setting Kafka
   * ignores.
   *
   * {{{
   * OptionSet.canonical("Max.Records.Per.Batch")  // "max.records.per.batch"
   * OptionSet.canonical("Stream.Rates.Bootstrap") // "stream.Rates.bootstrap"
   * OptionSet.canonical("kafka.Isolation.Level")  // "kafka.isolation.level"
   * }}}
   */
  def canonical(key: String): String = {
    val lower = key.toLowerCase(Locale.ROOT)
    if (lower.startsWith(StreamPrefix) && key.lastIndexOf('.') > StreamPrefix.length) {
      val dot = key.lastIndexOf('.')
      StreamPrefix + key.substring(StreamPrefix.length, dot) + lower.substring(dot)
    } else lower
  }

  /** (stream, property) of a canonical `stream.<name>.<property>` key. */
  private[config] def streamKey(c: String): Option[(String, String)] =
    if (!c.startsWith(StreamPrefix)) None
    else {
      val rest = c.substring(StreamPrefix.length)
      val dot = rest.lastIndexOf('.')
      if (dot <= 0 || dot == rest.length - 1) None
      else Some(rest.substring(0, dot) -> rest.substring(dot + 1))
    }

  private val distance = LevenshteinDistance.getDefaultInstance

  /** The known name closest to `name`, when it is close enough to be a typo of it. */
  private[config] def nearest(name: String, known: Seq[String]): Option[String] =
    known.map(k => k -> distance.apply(name, k).intValue).filter { case (k, d) =>
      d <= math.max(2, k.length / 4)
    }
      .sortBy { case (k, d) => (d, k) }.headOption.map(_._1)
}
