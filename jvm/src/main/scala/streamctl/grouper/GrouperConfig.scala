package streamctl.grouper

import streamctl.{StreamctlException, UserClass}

/**
 * The grouping settings of a query, read from its source options:
 *
 *  - `grouper` = `partition` (default) | `ssp` | `single`: a built-in grouper;
 *  - `grouper.class` = FQN of a user [[SystemStreamPartitionGrouper]] (instead of `grouper`);
 *  - `partition.expansion.algorithm` = `modulo` (default) or FQN of a [[PartitionExpansionAlgorithm]];
 *  - `stream.<name>.broadcast` = `true` | `false`: every task reads every partition of `<name>`.
 *
 * Other options are ignored (they belong to other parts of the source). User classes are
 * instantiated here, so a bad class name fails when the query starts, not at the first
 * partition change.
 *
 * {{{
 * val config = GrouperConfig.parse(Map("grouper" -> "ssp", "stream.rates.broadcast" -> "true"), Seq("orders", "rates"))
 * config.grouperName       // "ssp"
 * config.broadcastStreams  // Set("rates")
 * }}}
 */
final case class GrouperConfig(
    grouperName: String,
    grouper: SystemStreamPartitionGrouper,
    expansionName: String,
    expansion: PartitionExpansionAlgorithm,
    streams: Seq[String],
    broadcastStreams: Set[String])

object GrouperConfig {
  val GrouperOption = "grouper"
  val GrouperClassOption = "grouper.class"
  val ExpansionOption = "partition.expansion.algorithm"

  private val builtIns: Map[String, () => SystemStreamPartitionGrouper] = Map(
    "partition" -> (() => new GroupByPartition),
    "ssp" -> (() => new GroupBySystemStreamPartition),
    "single" -> (() => new AllSspToSingleTask))

  private val BroadcastPrefix = "stream."
  private val BroadcastSuffix = ".broadcast"

  /** Parses `options`; `streams` are the query's input streams, to catch misspelt stream names. */
  def parse(options: Map[String, String], streams: Seq[String]): GrouperConfig = {
    val (grouperName, grouper) = (options.get(GrouperOption), options.get(GrouperClassOption)) match {
      case (Some(g), Some(c)) =>
        throw StreamctlException(
          s"Options $GrouperOption ('$g') and $GrouperClassOption ('$c') are both set; set only one")
      case (None, Some(c)) => c -> UserClass.instantiate(GrouperClassOption, c, classOf[SystemStreamPartitionGrouper], options)
      case (g, None) =>
        val name = g.map(_.trim.toLowerCase(java.util.Locale.ROOT)).getOrElse("partition")
        val make = builtIns.getOrElse(name, throw StreamctlException(
          s"Option $GrouperOption: unknown grouper '${g.get}' (expected one of ${builtIns.keys.toSeq.sorted.mkString(", ")}, " +
            s"or set $GrouperClassOption to a class name)"))
        name -> make()
    }

    val (expansionName, expansion) = options.get(ExpansionOption).map(_.trim) match {
      case None | Some("modulo") => "modulo" -> new ModuloExpansion
      case Some(c) => c -> UserClass.instantiate(ExpansionOption, c, classOf[PartitionExpansionAlgorithm], options)
    }

    GrouperConfig(grouperName, grouper, expansionName, expansion, streams, broadcast(options, streams))
  }

  private def broadcast(options: Map[String, String], streams: Seq[String]): Set[String] =
    options.iterator.collect {
      case (k, v) if k.startsWith(BroadcastPrefix) && k.endsWith(BroadcastSuffix) &&
          k.length > BroadcastPrefix.length + BroadcastSuffix.length =>
        // Stream names may contain dots, so the name is whatever sits between prefix and suffix.
        val stream = k.substring(BroadcastPrefix.length, k.length - BroadcastSuffix.length)
        if (!streams.contains(stream))
          throw StreamctlException(
            s"Option $k names stream '$stream', which is not an input of this query (inputs: ${streams.mkString(", ")})")
        val on = v.trim.toLowerCase(java.util.Locale.ROOT) match {
          case "true" => true
          case "false" => false
          case _ => throw StreamctlException(s"Option $k: expected true or false, got '$v'")
        }
        stream -> on
    }.collect { case (s, true) => s }.toSet
}
