package streamctl.control

import scala.jdk.CollectionConverters._

import streamctl.Json
import streamctl.system.SSP

/**
 * One intermediate SSP's control figures after a batch: how many producers write it (0 until the
 * first control message says), how many of them it has heard from, how many are idle and how many
 * sent end-of-stream, and its reconciled watermark once every producer reported one.
 */
final case class SspControlFigures(
    producerCount: Int,
    producers: Int,
    endOfStream: Int,
    idle: Int,
    watermarkMs: Option[Long]
) {

  /** Every producer sent end-of-stream. */
  def ended: Boolean = producerCount > 0 && endOfStream == producerCount
}

object SspControlFigures {
  def of(s: SspControlState): SspControlFigures =
    SspControlFigures(
      s.producerCount,
      s.producers,
      s.endOfStreamCount,
      s.idleProducers.size,
      s.watermark
    )
}

/**
 * The source's `control` progress metric, per intermediate SSP by its display name (`orders-3`):
 * written by [[SourceControl]], read by what shows it (`ops.BatchSummary`, the Prometheus gauges),
 * so its form is known in one place.
 *
 * {{{
 * val json = ControlMetric.write(Seq(SSP.kafka("mid", 0) -> SspControlFigures(2, 2, 0, 1, Some(1714557600000L))))
 * // {"mid-0":{"taskCount":2,"producers":2,"endOfStream":0,"idle":1,"watermark":1714557600000}}
 * ControlMetric.read(json)("mid-0").idle   // 1
 * }}}
 */
object ControlMetric {
  val Name = "control"

  def write(figures: Seq[(SSP, SspControlFigures)]): String = {
    val perSsp = Json.obj()
    figures.foreach { case (ssp, f) =>
      val n = perSsp.putObject(ssp.toString)
      n.put("taskCount", f.producerCount)
      n.put("producers", f.producers)
      n.put("endOfStream", f.endOfStream)
      n.put("idle", f.idle)
      f.watermarkMs.foreach(n.put("watermark", _))
    }
    Json.write(perSsp)
  }

  def read(json: String): Map[String, SspControlFigures] =
    Json.parse(json, s"metric '$Name'").properties().asScala.map { e =>
      val n = e.getValue
      e.getKey -> SspControlFigures(
        n.path("taskCount").asInt(0),
        n.path("producers").asInt(0),
        n.path("endOfStream").asInt(0),
        n.path("idle").asInt(0),
        Option(n.get("watermark")).map(_.asLong)
      )
    }.toMap
}
