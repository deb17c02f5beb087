package streamctl.spark

import java.util.Locale

import streamctl.chooser.{ChooserConfig, ChooserFactory}

/**
 * The chooser options of a source ([[ChooserConfig]]) from its [[SourceOptions]].
 *
 * Spark option names are case-insensitive, while [[ChooserConfig]] matches exact keys and
 * stream names are case-sensitive; so keys are put in canonical form first: lower case,
 * except the stream name inside `stream.<name>.<property>`. A user's chooser receives
 * these canonical keys too.
 *
 * {{{
 * ChooserOptions.validated(SourceOptions(Map("streams" -> "Rates,tx", "Stream.Rates.Bootstrap" -> "true", ...)))
 *   .bootstrapStreams   // Set("Rates")
 * }}}
 */
object ChooserOptions {
  /** Parses, with errors naming the option and value; cheap, for executors too. */
  def parse(options: SourceOptions): ChooserConfig = ChooserConfig.parse(canonical(options.raw), options.streams)

  /** Parses and also instantiates `chooser.class` once: the driver calls it at query start. */
  def validated(options: SourceOptions): ChooserConfig = {
    val config = parse(options)
    ChooserFactory.validate(config)
    config
  }

  private def canonical(raw: Map[String, String]): Map[String, String] = raw.map { case (k, v) =>
    val lower = k.toLowerCase(Locale.ROOT)
    val key =
      if (lower.startsWith("kafka.")) k
      else if (lower.startsWith("stream.") && k.lastIndexOf('.') > "stream.".length) {
        val dot = k.lastIndexOf('.')
        "stream." + k.substring("stream.".length, dot) + lower.substring(dot)
      } else lower
    key -> v
  }
}
