package streamctl
package plan

import scala.jdk.CollectionConverters._

import streamctl.system.SSP

/**
 * The broker's head per SSP as a source reports it in query progress (its `latestOffset`): written
 * by the source, read back by the listener's batch summaries, so the form is known in one place.
 *
 * {{{
 * Heads.write(Map(SSP.kafka("orders", 0) -> 42L))   // {"heads":{"kafka/orders/0":42}}
 * Heads.read("""{"heads":{"kafka/orders/0":42}}""") // Map(SSP.kafka("orders", 0) -> 42)
 * Heads.read(null)                                   // Map() (no report, or another source's)
 * }}}
 */
object Heads {
  private val Field = "heads"

  def write(heads: Map[SSP, Long]): String = {
    val root = Json.obj()
    val h = root.putObject(Field)
    heads.toSeq.sortBy(_._1).foreach { case (ssp, o) => h.put(ssp.key, o) }
    Json.write(root)
  }

  /** The heads in a progress report's `latestOffset`; none when it holds no streamctl heads. */
  def read(json: String): Map[SSP, Long] =
    Option(json).filter(_.trim.startsWith("{")).map(Json.parse(_, "a streamctl latestOffset"))
      .flatMap(n => Option(n.get(Field)))
      .map(_.properties().asScala.map(e => SSP.parse(e.getKey) -> e.getValue.asLong).toMap)
      .getOrElse(Map.empty)
}
