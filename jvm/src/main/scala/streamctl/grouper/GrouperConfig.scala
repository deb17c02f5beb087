package streamctl.grouper

import streamctl.{StreamctlException, UserClass}
import streamctl.config.{OptionSet, OptionSpec, Options, Parsers, StreamProperty, UserClassOptions}

/**
 * The grouping settings of a query, read from its source options:
 *
 *   - `grouper` = `partition` (default) | `ssp` | `single`: a built-in grouper;
 *   - `grouper.class` = FQN of a user [[SystemStreamPartitionGrouper]] (instead of `grouper`), with
 *     its own options `grouper.option.*`;
 *   - `partition.expansion.algorithm` = `modulo` (default) or FQN of a
 *     [[PartitionExpansionAlgorithm]];
 *   - `stream.<name>.broadcast` = `true` | `false`: every task reads every partition of `<name>`;
 *   - `partition.check.interval` (default 10 s): how often the planner asks Kafka for partition
 *     counts (and topic IDs).
 *
 * User classes are instantiated here, with the query's options in canonical form
 * ([[streamctl.config.OptionSet.canonical]]), so a bad class name fails when the query starts, not
 * at the first partition change.
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
    broadcastStreams: Set[String],
    checkIntervalMs: Long = GrouperConfig.CheckInterval.default.get
)

object GrouperConfig {
  private val builtIns: Map[String, () => SystemStreamPartitionGrouper] = Map(
    "partition" -> (() => new GroupByPartition),
    "ssp" -> (() => new GroupBySystemStreamPartition),
    "single" -> (() => new AllSspToSingleTask)
  )

  val Grouper: OptionSpec[String] = OptionSpec.string(
    "grouper",
    s"a built-in grouper: ${builtIns.keys.toSeq.sorted.mkString(", ")} (default partition)"
  )
  val GrouperClass: OptionSpec[String] =
    OptionSpec.className("grouper.class", "a SystemStreamPartitionGrouper of your own")
  val Expansion: OptionSpec[String] = OptionSpec.string(
    "partition.expansion.algorithm",
    "modulo (default) or a PartitionExpansionAlgorithm class"
  )
  val CheckInterval: OptionSpec[Long] = OptionSpec.duration(
    "partition.check.interval",
    "how often a running query asks Kafka whether a stream grew or was recreated",
    default = Some(10000L)
  )
  val Broadcast: StreamProperty[Boolean] =
    StreamProperty("broadcast", Parsers.bool, "every task reads every partition")
  val UserOptions: UserClassOptions = UserClassOptions("grouper.option.", GrouperClass)

  /** The grouping options, for the source's [[streamctl.config.OptionSet]]. */
  val Registry: OptionSet = new OptionSet(
    "grouping",
    Seq(Grouper, GrouperClass, Expansion, CheckInterval),
    Seq(Broadcast),
    Seq(UserOptions)
  )

  /** Reads the grouping settings out of a query's options; `streams` are its input streams. */
  def apply(options: Options, streams: Seq[String]): GrouperConfig = {
    val (grouperName, grouper) = (options.get(Grouper), options.get(GrouperClass)) match {
      case (Some(g), Some(c)) =>
        throw StreamctlException(
          s"Options ${options.nameOf(Grouper)} ('$g') and ${options.nameOf(GrouperClass)} ('$c') are both set; set only one"
        )
      case (None, Some(c)) =>
        c -> UserClass.instantiate(
          GrouperClass.name,
          c,
          classOf[SystemStreamPartitionGrouper],
          options.canonical
        )
      case (g, None) =>
        val name = g.map(_.toLowerCase(java.util.Locale.ROOT)).getOrElse("partition")
        val make = builtIns.getOrElse(
          name,
          throw StreamctlException(
            s"Option ${Grouper.name}: unknown grouper '${g.get}' (expected one of ${builtIns.keys.toSeq.sorted.mkString(", ")}, " +
              s"or set ${GrouperClass.name} to a class name)"
          )
        )
        name -> make()
    }

    // Built-in names in any case, as grouper names; anything else is a class name.
    val (expansionName, expansion) =
      options.get(Expansion).filterNot(_.equalsIgnoreCase("modulo")) match {
        case None => "modulo" -> new ModuloExpansion
        case Some(c) => c -> UserClass.instantiate(
            Expansion.name,
            c,
            classOf[PartitionExpansionAlgorithm],
            options.canonical
          )
      }

    GrouperConfig(
      grouperName,
      grouper,
      expansionName,
      expansion,
      streams,
      options.streams(Broadcast, streams).collect { case (s, true) => s }.toSet,
      options(CheckInterval)
    )
  }

  /** The grouping settings alone, from options that may hold other parts' settings too. */
  def parse(options: Map[String, String], streams: Seq[String]): GrouperConfig =
    apply(Registry.read(options), streams)
}
