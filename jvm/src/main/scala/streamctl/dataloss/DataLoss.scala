package streamctl.dataloss

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode

import streamctl.Json
import streamctl.plan.StateCodec
import streamctl.system.{SSP, SkippedRange, SspValues}

/**
 * Records a query skipped because they were gone, kept in the source's offset (state `dataLoss`):
 * the totals since the query's checkpoint began (records skipped also per SSP, since streamctl kept
 * them: `recordsSkippedBySsp`, only once there are any), and what the batch ending at that offset
 * skipped when it was planned. Being in the offset log, the ranges say why a batch began where it
 * did, a replay neither repeats nor forgets them, and the totals survive restarts.
 *
 * {{{
 * {"recordsSkipped":500,"streamsRecreated":1,
 *  "skipped":[{"ssp":"kafka/orders/0","from":1000,"until":1500}],
 *  "recreated":[{"stream":"orders","before":"Rk7Hz...","now":"a0P9q..."}]}
 * }}}
 */
final case class DataLoss(
    recordsSkipped: Long,
    streamsRecreated: Long,
    skipped: Seq[SkippedRange],
    recreated: Seq[Recreation],
    /** [[recordsSkipped]] per SSP (since streamctl kept it: an older offset's total is not in). */
    skippedBySsp: Map[SSP, Long] = Map.empty
) {
  def isEmpty: Boolean =
    recordsSkipped == 0 && streamsRecreated == 0 && skipped.isEmpty && recreated.isEmpty

  /** The totals, for the next batch: what this one skipped is its own. */
  def carried: DataLoss = copy(skipped = Nil, recreated = Nil)

  /** Ranges the planner moves past in this batch. */
  def skip(ranges: Seq[SkippedRange]): DataLoss =
    copy(
      recordsSkipped = recordsSkipped + ranges.iterator.map(_.records).sum,
      skipped = skipped ++ ranges,
      skippedBySsp = counted(ranges)
    )

  /**
   * Ranges readers found gone while reading an earlier batch: counted, already logged where they
   * were found.
   */
  def skippedWhileReading(ranges: Seq[SkippedRange]): DataLoss =
    copy(
      recordsSkipped = recordsSkipped + ranges.iterator.map(_.records).sum,
      skippedBySsp = counted(ranges)
    )

  private def counted(ranges: Seq[SkippedRange]): Map[SSP, Long] =
    ranges.foldLeft(skippedBySsp)((m, r) => m.updated(r.ssp, m.getOrElse(r.ssp, 0L) + r.records))

  def recreate(streams: Seq[Recreation]): DataLoss =
    copy(streamsRecreated = streamsRecreated + streams.size, recreated = recreated ++ streams)

}

object DataLoss {
  val empty: DataLoss = DataLoss(0, 0, Nil, Nil)

  /**
   * For each SSP whose position is before the oldest offset still on the broker, the offsets in
   * between. `positions` holds the least position of each SSP over the tasks reading it.
   */
  def gaps(positions: Map[SSP, Long], oldest: Map[SSP, Long]): Seq[SkippedRange] =
    positions.toSeq.sortBy(_._1).flatMap { case (ssp, at) =>
      oldest.get(ssp).filter(_ > at).map(o => SkippedRange(ssp, at, o))
    }

  object Codec extends StateCodec[DataLoss] {
    val key = "dataLoss"
    val empty: DataLoss = DataLoss.empty

    def write(d: DataLoss): JsonNode = {
      val root = Json.obj()
      root.put("recordsSkipped", d.recordsSkipped)
      root.put("streamsRecreated", d.streamsRecreated)
      if (d.skipped.nonEmpty) {
        val s = root.putArray("skipped")
        d.skipped.sortBy(r => (r.ssp, r.from)).foreach(r =>
          s.addObject().put("ssp", r.ssp.key).put("from", r.from).put("until", r.until)
        )
      }
      if (d.skippedBySsp.nonEmpty)
        root.set[JsonNode]("recordsSkippedBySsp", SspValues.json(d.skippedBySsp))
      if (d.recreated.nonEmpty) {
        val c = root.putArray("recreated")
        d.recreated.sortBy(_.stream).foreach(r =>
          c.addObject().put("stream", r.stream).put("before", r.before).put("now", r.now)
        )
      }
      root
    }

    def read(node: JsonNode, what: String): DataLoss = {
      def list(name: String) = Option(node.get(name)).map(_.elements().asScala.toSeq).getOrElse(Nil)
      DataLoss(
        Json.field(node, "recordsSkipped", what).asLong(),
        Json.field(node, "streamsRecreated", what).asLong(),
        list("skipped").map(r =>
          SkippedRange(
            SSP.parse(Json.field(r, "ssp", what).asText()),
            Json.field(r, "from", what).asLong(),
            Json.field(r, "until", what).asLong()
          )
        ),
        list("recreated").map(r =>
          Recreation(
            Json.field(r, "stream", what).asText(),
            Json.field(r, "before", what).asText(),
            Json.field(r, "now", what).asText()
          )
        ),
        Option(node.get("recordsSkippedBySsp")).fold(Map.empty[SSP, Long])(SspValues.read(_, what))
      )
    }
  }
}
