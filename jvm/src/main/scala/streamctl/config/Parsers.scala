package streamctl
package config

import java.util.Locale

import streamctl.StreamctlException

/**
 * The one parser of each kind of option value. Each takes the option's name as the user wrote it
 * and the value, and fails with an error naming both, so every option reads alike.
 *
 * {{{
 * Parsers.bool("failOnDataLoss", "False")        // false
 * Parsers.durationMs("producer.idle.timeout", "1min") // 60000
 * Parsers.positiveLong("maxOffsetsPerTrigger", "-3") // StreamctlException: Option 'maxOffsetsPerTrigger' must be an integer > 0, not '-3'
 * }}}
 */
object Parsers {
  // streamctl's Spark settings (`spark.streamctl.*`, set on the session or the cluster) follow the
  // same rules as the source's and sink's options; the error says which of the two the user set.
  private def subject(name: String): String =
    if (name.startsWith("spark.")) s"Spark setting '$name'" else s"Option '$name'"

  def nonEmpty(name: String, v: String): String = {
    val t = v.trim
    if (t.isEmpty) throw StreamctlException(s"${subject(name)} is empty")
    t
  }

  /** A comma-separated list; blanks between commas are dropped. */
  def list(name: String, v: String): Seq[String] =
    v.split(',').iterator.map(_.trim).filter(_.nonEmpty).toSeq

  def bool(name: String, v: String): Boolean = v.trim.toLowerCase(Locale.ROOT) match {
    case "true" => true
    case "false" => false
    case _ => throw StreamctlException(s"${subject(name)} must be true or false, not '$v'")
  }

  def int(name: String, v: String): Int =
    v.trim.toIntOption.getOrElse(throw StreamctlException(
      s"${subject(name)} must be an integer, not '$v'"
    ))

  def positiveInt(name: String, v: String): Int =
    v.trim.toIntOption.filter(
      _ > 0
    ).getOrElse(throw StreamctlException(s"${subject(name)} must be an integer > 0, not '$v'"))

  def nonNegativeLong(name: String, v: String): Long =
    v.trim.toLongOption.filter(
      _ >= 0
    ).getOrElse(throw StreamctlException(s"${subject(name)} must be an integer >= 0, not '$v'"))

  def positiveLong(name: String, v: String): Long =
    v.trim.toLongOption.filter(
      _ > 0
    ).getOrElse(throw StreamctlException(s"${subject(name)} must be an integer > 0, not '$v'"))

  /**
   * `what` names the kind of value in the error: "Unknown chooser 'fastest' in option 'chooser';
   * ...".
   */
  def oneOf(what: String, values: Seq[String])(name: String, v: String): String =
    values.find(_.equalsIgnoreCase(v.trim)).getOrElse(throw StreamctlException(
      s"Unknown $what '$v' in option '$name'; expected one of ${values.mkString(", ")}"
    ))

  /**
   * A fully qualified class name; whether it loads is checked where it is instantiated
   * ([[streamctl.UserClass]]).
   */
  def className(name: String, v: String): String = {
    val t = v.trim
    if (t.isEmpty)
      throw StreamctlException(s"${subject(name)} is empty; give a fully qualified class name")
    t
  }

  def classNames(name: String, v: String): Seq[String] = list(name, v)

  private val Duration = """(\d+(?:\.\d+)?)\s*([a-z]+)""".r
  private val Digits = """(\d+)""".r

  // Microseconds per unit: Spark's time suffixes (`JavaUtils.timeSuffixes`), written out here so
  // that the options registry needs no Spark (the operator commands run without it).
  private val MicrosPerUnit: Map[String, Long] = Map(
    "us" -> 1L,
    "ms" -> 1000L,
    "s" -> 1000000L,
    "m" -> 60000000L,
    "min" -> 60000000L,
    "h" -> 3600000000L,
    "d" -> 86400000000L
  )

  // Spark's suffixes under the longer names people also write.
  private val UnitWords: Map[String, String] = Map(
    "milli" -> "ms",
    "millis" -> "ms",
    "millisecond" -> "ms",
    "milliseconds" -> "ms",
    "sec" -> "s",
    "secs" -> "s",
    "second" -> "s",
    "seconds" -> "s",
    "mins" -> "min",
    "minute" -> "min",
    "minutes" -> "min",
    "hour" -> "h",
    "hours" -> "h",
    "day" -> "d",
    "days" -> "d"
  )

  /**
   * Milliseconds of a duration: a number and a unit, with the units of Spark's own time strings
   * (`us`, `ms`, `s`, `m`/`min`, `h`, `d`), and also the longer unit names (`seconds`,
   * `2 minutes`), a space before the unit and a fraction (`1.5s`). A unit is required: a bare `10`
   * could mean seconds or milliseconds, and guessing wrong is a factor of 1000. Zero is allowed.
   */
  def durationMs(name: String, v: String): Long = durationMs(name, v, bareMs = false)

  /**
   * A duration of an option streamctl shares with Spark's Kafka source (`maxTriggerDelay`): there a
   * bare whole number is milliseconds, as Spark reads it, so a job moved from `format("kafka")`
   * keeps its meaning; otherwise as [[durationMs]].
   */
  def sparkDurationMs(name: String, v: String): Long = durationMs(name, v, bareMs = true)

  private def durationMs(name: String, v: String, bareMs: Boolean): Long = {
    def fail(): Nothing = throw StreamctlException(
      s"${subject(name)} must be a duration with a unit, such as '10s', '500ms' or '1min'; got '$v'"
    )
    v.trim.toLowerCase(Locale.ROOT) match {
      case Digits(ms) if bareMs => ms.toLongOption.getOrElse(fail())
      case Duration(number, unit) =>
        val suffix = UnitWords.getOrElse(unit, unit)
        val micros = MicrosPerUnit.getOrElse(suffix, fail())
        val ms = BigDecimal(number) * micros / 1000
        if (ms > Long.MaxValue / 2) fail()
        ms.setScale(0, BigDecimal.RoundingMode.HALF_UP).toLong
      case _ => fail()
    }
  }
}
