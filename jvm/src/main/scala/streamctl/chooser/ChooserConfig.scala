package streamctl.chooser

import streamctl.StreamctlException
import streamctl.config.{OptionSet, OptionSpec, Options, Parsers, StreamProperty, UserClassOptions}

/**
 * The chooser options of a query, validated against the query's streams.
 *
 * | option                    | value                                                                                 |
 * |:--------------------------|:--------------------------------------------------------------------------------------|
 * | `chooser`                 | `round-robin` (default) or `time-aligned`                                             |
 * | `chooser.class`           | FQN of a user [[MessageChooser]] (replaces the base chooser), with `chooser.option.*` |
 * | `chooser.batch.size`      | int > 0: up to N envelopes of one SSP in a row                                        |
 * | `stream.<name>.priority`  | int, higher first; default 0                                                          |
 * | `stream.<name>.bootstrap` | `true`/`false`                                                                        |
 *
 * {{{
 * val cfg = ChooserConfig.parse(Map("stream.currency.bootstrap" -> "true",
 *                                   "stream.live.priority" -> "10"),
 *                               streams = Seq("currency", "live", "backfill"))
 * cfg.priorityOf("live")        // 10
 * cfg.isBootstrap("currency")   // true
 * }}}
 *
 * @param options
 *   the query's options in canonical form, handed to a user chooser's constructor
 */
final case class ChooserConfig(
    kind: ChooserConfig.Kind,
    chooserClass: Option[String],
    batchSize: Option[Int],
    priorities: Map[String, Int],
    bootstrapStreams: Set[String],
    options: Map[String, String]
) {

  def priorityOf(stream: String): Int = priorities.getOrElse(stream, 0)
  def isBootstrap(stream: String): Boolean = bootstrapStreams.contains(stream)
  def timeAligned: Boolean = kind == ChooserConfig.TimeAligned
}

object ChooserConfig {
  // Serializable itself: on Scala 2.12 a case object is deserialized through the no-argument
  // constructor of its first superclass that is not (Kind has none), which fails in an executor.
  sealed abstract class Kind(val name: String) extends Serializable
  case object RoundRobin extends Kind("round-robin")
  case object TimeAligned extends Kind("time-aligned")
  val kinds: Seq[Kind] = Seq(RoundRobin, TimeAligned)

  val Chooser: OptionSpec[String] = OptionSpec.oneOf(
    "chooser",
    "chooser",
    kinds.map(_.name),
    "the base chooser inside a task",
    default = Some(RoundRobin.name)
  )
  val ChooserClass: OptionSpec[String] =
    OptionSpec.className("chooser.class", "a MessageChooser of your own")
  val BatchSize: OptionSpec[Int] =
    OptionSpec.positiveInt("chooser.batch.size", "up to N envelopes of one SSP in a row")
  val Priority: StreamProperty[Int] =
    StreamProperty("priority", Parsers.int, "priority tier, higher first (default 0)")
  val Bootstrap: StreamProperty[Boolean] = StreamProperty(
    "bootstrap",
    Parsers.bool,
    "read to the head it had at query start before any other stream"
  )
  val UserOptions: UserClassOptions = UserClassOptions("chooser.option.", ChooserClass)

  /** The chooser options, for the source's [[streamctl.config.OptionSet]]. */
  val Registry: OptionSet = new OptionSet(
    "chooser",
    Seq(Chooser, ChooserClass, BatchSize),
    Seq(Priority, Bootstrap),
    Seq(UserOptions)
  )

  /** Everything round-robin, no budget: what a query without chooser options gets. */
  val default: ChooserConfig =
    ChooserConfig(RoundRobin, None, None, Map.empty, Set.empty, Map.empty)

  /**
   * Reads the chooser settings out of a query's options; the first problem is an error naming the
   * option.
   */
  def apply(options: Options, streams: Seq[String]): ChooserConfig = {
    val kind = kinds.find(_.name == options(Chooser)).get
    val chooserClass = options.get(ChooserClass)
    chooserClass.foreach { c =>
      if (kind == TimeAligned) throw StreamctlException(
        s"Options ${Chooser.name}=${TimeAligned.name} and ${ChooserClass.name}=$c both pick the base chooser; set only one"
      )
    }
    ChooserConfig(
      kind,
      chooserClass,
      options.get(BatchSize),
      options.streams(Priority, streams),
      options.streams(Bootstrap, streams).collect { case (s, true) => s }.toSet,
      options.canonical
    )
  }

  /** The chooser settings alone, from options that may hold other parts' settings too. */
  def parse(options: Map[String, String], streams: Seq[String]): ChooserConfig =
    apply(Registry.read(options), streams)
}
