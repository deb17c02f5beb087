package streamctl.config

/**
 * One option of `format("streamctl")`: its canonical name (spelled as documented, e.g. Spark's
 * `maxOffsetsPerTrigger`; matched ignoring case), the other names that mean the same (`aliases`,
 * e.g. streamctl's older `max.records.per.batch`), how its value is read, its default and a
 * one-line description. Declared once, next to the code that reads it (the feature's own package);
 * [[OptionSet]] collects the specs of the source and of the sink.
 *
 * {{{
 * val MaxRecords = OptionSpec.positiveLong("maxOffsetsPerTrigger", "per-batch record budget").alias("max.records.per.batch")
 * val FailOnDataLoss = OptionSpec.bool("failOnDataLoss", "fail when unread records are gone", default = true)
 * options.get(MaxRecords)   // Option[Long]
 * options(FailOnDataLoss)   // Boolean: the default when not set
 * }}}
 */
final case class OptionSpec[T](
    name: String,
    parse: (String, String) => T,
    doc: String,
    default: Option[T] = None,
    aliases: Seq[String] = Nil
) {

  /**
   * The same option, also accepted under `names` (e.g. the name streamctl used before it took
   * Spark's).
   */
  def alias(names: String*): OptionSpec[T] = copy(aliases = aliases ++ names)

  /** Every name it is given under, in the canonical (lower case) form [[OptionSet]] compares. */
  def names: Seq[String] = (name +: aliases).map(_.toLowerCase(java.util.Locale.ROOT))
}

object OptionSpec {
  def string(name: String, doc: String): OptionSpec[String] =
    OptionSpec(name, Parsers.nonEmpty, doc)
  def list(name: String, doc: String): OptionSpec[Seq[String]] = OptionSpec(name, Parsers.list, doc)
  def bool(name: String, doc: String, default: Boolean): OptionSpec[Boolean] =
    OptionSpec(name, Parsers.bool, doc, Some(default))
  def positiveInt(name: String, doc: String, default: Option[Int] = None): OptionSpec[Int] =
    OptionSpec(name, Parsers.positiveInt, doc, default)
  def positiveLong(name: String, doc: String): OptionSpec[Long] =
    OptionSpec(name, Parsers.positiveLong, doc)
  def duration(name: String, doc: String, default: Option[Long] = None): OptionSpec[Long] =
    OptionSpec(name, Parsers.durationMs, doc, default)

  /** A duration of an option Spark's Kafka source has too: a bare number is milliseconds there. */
  def sparkDuration(name: String, doc: String, default: Option[Long] = None): OptionSpec[Long] =
    OptionSpec(name, Parsers.sparkDurationMs, doc, default)

  /**
   * One of `values` (compared ignoring case, returned as listed); `what` names the kind in errors
   * ("chooser").
   */
  def oneOf(
      name: String,
      what: String,
      values: Seq[String],
      doc: String,
      default: Option[String] = None
  ): OptionSpec[String] =
    OptionSpec(name, Parsers.oneOf(what, values), doc, default)
  def className(name: String, doc: String): OptionSpec[String] =
    OptionSpec(name, Parsers.className, doc)
  def classNames(name: String, doc: String): OptionSpec[Seq[String]] =
    OptionSpec(name, Parsers.classNames, doc)
}
