package streamctl.system

import java.util.regex.{Pattern, PatternSyntaxException}

import scala.jdk.CollectionConverters._

import streamctl.{Json, StreamctlException}

/**
 * Which streams a source reads, as Spark's Kafka source names them: `subscribe` (a list of topics),
 * `subscribePattern` (every topic whose name contains a match of a Java regex, also topics created
 * while the query runs) or `assign` (given partitions of given topics).
 *
 * {{{
 * Subscription.Topics(Seq("orders")).streams(admin)          // Seq("orders")
 * Subscription.parsePattern("subscribePattern", "orders-.*")  // picks up orders-eu when it appears
 * Subscription.parseAssign("assign", """{"orders":[0,2]}""")  // Assign(Map("orders" -> Seq(0, 2)))
 * }}}
 */
sealed trait Subscription extends Serializable {

  /**
   * The streams read now (for a pattern: the matching topics Kafka has now), sorted for patterns.
   */
  def streams(admin: SystemAdmin): Seq[String]

  /** The streams named in the options themselves (none for a pattern). */
  def named: Seq[String]

  /** The only SSPs read, for `assign` (which, as in Spark, never reads partitions added later). */
  def only: Option[Set[SSP]] = None

  /** How the option is named in errors. */
  def describe: String
}

object Subscription {
  final case class Topics(topics: Seq[String]) extends Subscription {
    override def streams(admin: SystemAdmin): Seq[String] = topics
    override def named: Seq[String] = topics
    override def describe: String = "option 'subscribe'"
  }

  final case class Matching(pattern: String) extends Subscription {
    @transient private lazy val regex = Pattern.compile(pattern)

    /**
     * Whether the pattern reads `stream`: a match anywhere in the name, as Spark's Kafka source
     * finds topics (`orders` also reads `orders-eu`; anchor it, `^orders$`, for one topic).
     */
    def reads(stream: String): Boolean = regex.matcher(stream).find()

    override def streams(admin: SystemAdmin): Seq[String] =
      admin.listStreams().filter(reads).toSeq.sorted
    override def named: Seq[String] = Nil
    override def describe: String = s"option 'subscribePattern' ($pattern)"
  }

  final case class Assign(partitions: Map[String, Seq[Int]]) extends Subscription {
    override def streams(admin: SystemAdmin): Seq[String] = partitions.keys.toSeq.sorted
    override def named: Seq[String] = partitions.keys.toSeq.sorted
    override def only: Option[Set[SSP]] = Some(partitions.flatMap { case (s, ps) =>
      ps.map(SSP.kafka(s, _))
    }.toSet)
    override def describe: String = "option 'assign'"
  }

  def parsePattern(option: String, v: String): Matching = {
    try Pattern.compile(v)
    catch {
      case e: PatternSyntaxException => throw StreamctlException(
          s"Option '$option' is not a Java regular expression: ${e.getDescription} in '$v'"
        )
    }
    Matching(v)
  }

  /** `{"topicA":[0,1],"topicB":[2,4]}`, as Spark's `assign`. */
  def parseAssign(option: String, v: String): Assign = {
    val what = s"""option '$option' (expected JSON such as {"topicA":[0,1],"topicB":[2,4]})"""
    val node = Json.parse(v, what)
    if (!node.isObject || node.size() == 0) throw StreamctlException(s"Malformed $what: '$v'")
    Assign(node.properties().asScala.map { e =>
      val ps = e.getValue
      if (
        !ps.isArray || ps.size() == 0 || !ps.elements().asScala.forall(p =>
          p.canConvertToInt && p.asInt() >= 0
        )
      )
        throw StreamctlException(
          s"Malformed $what: topic '${e.getKey}' needs a non-empty list of partition numbers"
        )
      e.getKey -> ps.elements().asScala.map(_.asInt()).toSeq.distinct.sorted
    }.toMap)
  }
}
