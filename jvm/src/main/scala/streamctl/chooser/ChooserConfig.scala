package streamctl.chooser

import streamctl.StreamctlException

/**
 * The chooser options of a query, validated against the query's streams.
 *
 * Keys are case-sensitive because stream names are: from Spark, pass
 * `CaseInsensitiveStringMap.asCaseSensitiveMap`, not the lower-cased view.
 *
 * | key                         | value                                             |
 * |-----------------------------|---------------------------------------------------|
 * | `chooser`                   | `round-robin` (default) or `time-aligned`         |
 * | `chooser.class`             | FQN of a user [[MessageChooser]] (replaces the base chooser) |
 * | `chooser.batch.size`        | int > 0: up to N envelopes of one SSP in a row    |
 * | `stream.<name>.priority`    | int, higher first; default 0                      |
 * | `stream.<name>.bootstrap`   | `true`/`false`                                    |
 * | `max.records.per.batch`     | long > 0: the batch's record budget; unset = all available |
 *
 * {{{
 * val cfg = ChooserConfig.parse(Map("stream.currency.bootstrap" -> "true",
 *                                   "stream.live.priority" -> "10"),
 *                               streams = Seq("currency", "live", "backfill"))
 * cfg.priorityOf("live")        // 10
 * cfg.isBootstrap("currency")   // true
 * }}}
 *
 * @param options the raw options, handed to a user chooser's constructor
 */
final case class ChooserConfig(
    kind: ChooserConfig.Kind,
    chooserClass: Option[String],
    batchSize: Option[Int],
    priorities: Map[String, Int],
    bootstrapStreams: Set[String],
    maxRecordsPerBatch: Option[Long],
    options: Map[String, String]) {

  def priorityOf(stream: String): Int = priorities.getOrElse(stream, 0)
  def isBootstrap(stream: String): Boolean = bootstrapStreams.contains(stream)
  def timeAligned: Boolean = kind == ChooserConfig.TimeAligned
}

object ChooserConfig {
  sealed abstract class Kind(val name: String)
  case object RoundRobin extends Kind("round-robin")
  case object TimeAligned extends Kind("time-aligned")
  val kinds: Seq[Kind] = Seq(RoundRobin, TimeAligned)

  val ChooserKey = "chooser"
  val ClassKey = "chooser.class"
  val BatchSizeKey = "chooser.batch.size"
  val MaxRecordsKey = "max.records.per.batch"
  private val StreamPrefix = "stream."
  private val PrioritySuffix = ".priority"
  private val BootstrapSuffix = ".bootstrap"

  def priorityKey(stream: String): String = StreamPrefix + stream + PrioritySuffix
  def bootstrapKey(stream: String): String = StreamPrefix + stream + BootstrapSuffix

  /** Everything round-robin, no budget: what a query without chooser options gets. */
  val default: ChooserConfig = ChooserConfig(RoundRobin, None, None, Map.empty, Set.empty, None, Map.empty)

  /** Validates `options`; the first problem found is a [[StreamctlException]] naming the option and value. */
  def parse(options: Map[String, String], streams: Seq[String]): ChooserConfig = {
    val known = streams.toSet

    val kind = options.get(ChooserKey).map(_.trim) match {
      case None => RoundRobin
      case Some(v) => kinds.find(_.name == v).getOrElse(throw StreamctlException(
        s"Unknown chooser '$v' in option $ChooserKey; expected one of ${kinds.map(_.name).mkString(", ")}"))
    }

    val chooserClass = options.get(ClassKey).map(_.trim)
    chooserClass.foreach { c =>
      if (c.isEmpty) throw StreamctlException(s"Option $ClassKey is empty; give a fully qualified class name")
      if (kind == TimeAligned) throw StreamctlException(
        s"Options $ChooserKey=${TimeAligned.name} and $ClassKey=$c both pick the base chooser; set only one")
    }

    val batchSize = options.get(BatchSizeKey).map { v =>
      val n = v.trim.toIntOption.getOrElse(throw StreamctlException(s"Option $BatchSizeKey must be an integer > 0, got '$v'"))
      if (n <= 0) throw StreamctlException(s"Option $BatchSizeKey must be > 0, got $n")
      n
    }

    val maxRecords = options.get(MaxRecordsKey).map { v =>
      val n = v.trim.toLongOption.getOrElse(throw StreamctlException(s"Option $MaxRecordsKey must be an integer > 0, got '$v'"))
      if (n <= 0) throw StreamctlException(s"Option $MaxRecordsKey must be > 0, got $n")
      n
    }

    // Stream names may contain dots, so the name is whatever lies between prefix and suffix.
    def perStream(suffix: String): Seq[(String, String, String)] =
      options.toSeq.sortBy(_._1).collect {
        case (k, v) if k.startsWith(StreamPrefix) && k.endsWith(suffix) && k.length > StreamPrefix.length + suffix.length =>
          val stream = k.substring(StreamPrefix.length, k.length - suffix.length)
          if (!known.contains(stream)) throw StreamctlException(
            s"Option $k names stream '$stream', which this query does not read (streams: ${streams.mkString(", ")})")
          (k, stream, v)
      }

    val priorities = perStream(PrioritySuffix).map { case (k, stream, v) =>
      stream -> v.trim.toIntOption.getOrElse(throw StreamctlException(s"Option $k must be an integer, got '$v'"))
    }.toMap

    val bootstrap = perStream(BootstrapSuffix).flatMap { case (k, stream, v) =>
      v.trim.toLowerCase(java.util.Locale.ROOT) match {
        case "true" => Some(stream)
        case "false" => None
        case _ => throw StreamctlException(s"Option $k must be true or false, got '$v'")
      }
    }.toSet

    ChooserConfig(kind, chooserClass, batchSize, priorities, bootstrap, maxRecords, options)
  }
}
