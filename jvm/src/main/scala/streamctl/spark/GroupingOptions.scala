package streamctl.spark

import java.util.Locale

import streamctl.grouper.GrouperConfig

/**
 * The grouping part of the source options: the [[GrouperConfig]] (grouper, user class,
 * expansion algorithm, broadcast streams) and how often the planner asks Kafka for
 * partition counts (`partition.check.interval`, default 10 s). Parsed with the other source
 * options, so a bad grouper name or an unloadable class fails the query when it starts.
 *
 * Option names are case-insensitive elsewhere in the source; [[GrouperConfig]] reads exact
 * names, so they are handed over in their canonical spelling (stream names as the user wrote
 * them). User classes still receive every option, as given.
 *
 * {{{
 * val g = GroupingOptions(SourceOptions(Map("kafka.bootstrap.servers" -> "h:9092", "streams" -> "orders",
 *                                           "grouper" -> "ssp", "partition.check.interval" -> "500ms")))
 * g.config.grouperName // "ssp"
 * g.checkIntervalMs    // 500
 * }}}
 */
final case class GroupingOptions(config: GrouperConfig, checkIntervalMs: Long)

object GroupingOptions {
  val CheckInterval = "partition.check.interval"
  val DefaultCheckIntervalMs = 10000L

  def apply(o: SourceOptions): GroupingOptions = {
    val userClassOptions = o.raw.keys.map(_.toLowerCase(Locale.ROOT)).filter(_.startsWith("grouper.option.")).toSeq
    val named = (Seq(GrouperConfig.GrouperOption, GrouperConfig.GrouperClassOption, GrouperConfig.ExpansionOption) ++
      userClassOptions).flatMap(n => o.get(n).map(n -> _))
    val broadcast = for {
      (stream, props) <- o.streamProperties.toSeq
      v <- props.get("broadcast")
    } yield s"stream.$stream.broadcast" -> v
    val config = GrouperConfig.parse(o.raw ++ named ++ broadcast, o.streams)
    val interval = o.get(CheckInterval).map(DurationOption.millis(CheckInterval, _)).getOrElse(DefaultCheckIntervalMs)
    GroupingOptions(config, interval)
  }
}
