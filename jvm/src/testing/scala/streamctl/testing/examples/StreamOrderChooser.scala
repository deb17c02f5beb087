package streamctl.testing.examples

import streamctl.StreamctlException
import streamctl.chooser.MessageChooser
import streamctl.system.{Envelope, SSP}

/**
 * An example of a user chooser (`chooser.class`), shipped in the streamctl-testing jar (not in the
 * product) so that the docs and tests can load one by name: it prefers the streams in the order the
 * query's `subscribe` option lists them, so `subscribe=orders,audit` always processes an offered
 * `orders` envelope before an `audit` one; SSPs of one stream take turns. (The built-in
 * `stream.<name>.priority` does the same; this class shows the shape of your own.) Option
 * `chooser.option.order` (a comma-separated list of the same streams) replaces that order: options
 * of your own are named `chooser.option.<name>` and reach the constructor with the query's other
 * options.
 *
 * What a user chooser needs, as here: a public class implementing [[MessageChooser]] with a public
 * constructor taking the query's options (`Map[String, String]` or `java.util.Map[String, String]`)
 * or none; `update` receives at most one envelope per SSP at a time, `choose` returns null when it
 * has nothing, and never returns an envelope twice.
 *
 * {{{
 * spark.readStream.format("streamctl")
 *   .option("subscribe", "orders,audit")
 *   .option("chooser.class", "streamctl.testing.examples.StreamOrderChooser")
 *   .option("chooser.option.order", "audit,orders")   // optional
 * }}}
 */
class StreamOrderChooser(options: Map[String, String]) extends MessageChooser {
  private val order: Map[String, Int] = {
    val streams = options.getOrElse(
      "subscribe",
      throw StreamctlException("StreamOrderChooser needs the 'subscribe' option")
    )
    val listed =
      options.getOrElse("chooser.option.order", streams).split(',').map(_.trim).filter(_.nonEmpty)
    val unread = listed.toSet -- streams.split(',').map(_.trim)
    if (unread.nonEmpty) throw StreamctlException(
      s"Option 'chooser.option.order' names ${unread.toSeq.sorted.mkString(", ")}, not in 'subscribe' ($streams)"
    )
    listed.zipWithIndex.toMap
  }
  // One FIFO per stream rank: within a stream, SSPs come in the order they were offered.
  private val queues = Array.fill(order.size)(new java.util.ArrayDeque[Envelope]())

  private def rank(ssp: SSP): Int =
    order.getOrElse(
      ssp.stream,
      throw StreamctlException(s"StreamOrderChooser: stream '${ssp.stream}' is not in 'subscribe'")
    )

  override def register(ssp: SSP, offset: Long): Unit = { rank(ssp); () }

  override def update(envelope: Envelope): Unit = queues(rank(envelope.ssp)).addLast(envelope)

  override def choose(): Envelope = {
    var i = 0
    while (i < queues.length) {
      val e = queues(i).pollFirst()
      if (e != null) return e
      i += 1
    }
    null
  }
}
