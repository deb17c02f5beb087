package streamctl.spark

import java.util.Locale

import streamctl.StreamctlException

/**
 * Reads a duration option such as `partition.check.interval`: a number and a unit (`ms`,
 * `s`, `m`/`min`, `h`, or the words `seconds`, `minutes`...), spaces allowed between them.
 * A unit is required: a bare `10` could mean seconds or milliseconds, and guessing wrong is
 * a factor of 1000.
 *
 * {{{
 * DurationOption.millis("partition.check.interval", "10s")   // 10000
 * DurationOption.millis("partition.check.interval", "500ms") // 500
 * }}}
 */
object DurationOption {
  private val Pattern = """(\d+(?:\.\d+)?)\s*([a-z]+)""".r

  private val UnitMillis: Map[String, Double] = Map(
    "ms" -> 1.0, "milli" -> 1.0, "millis" -> 1.0, "millisecond" -> 1.0, "milliseconds" -> 1.0,
    "s" -> 1e3, "sec" -> 1e3, "secs" -> 1e3, "second" -> 1e3, "seconds" -> 1e3,
    "m" -> 6e4, "min" -> 6e4, "mins" -> 6e4, "minute" -> 6e4, "minutes" -> 6e4,
    "h" -> 3.6e6, "hour" -> 3.6e6, "hours" -> 3.6e6)

  /** Milliseconds (zero allowed), or an error naming the option and the value. */
  def millis(option: String, value: String): Long = value.trim.toLowerCase(Locale.ROOT) match {
    case Pattern(n, unit) if UnitMillis.contains(unit) =>
      val ms = n.toDouble * UnitMillis(unit)
      if (ms > Long.MaxValue / 2) fail(option, value)
      math.round(ms)
    case _ => fail(option, value)
  }

  private def fail(option: String, value: String): Nothing =
    throw StreamctlException(s"Option '$option' must be a duration with a unit, such as '10s', '500ms' or '1min'; " +
      s"got '$value'")
}
