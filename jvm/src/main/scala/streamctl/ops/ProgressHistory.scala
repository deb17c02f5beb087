package streamctl.ops

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import streamctl.Json
import streamctl.metadata.{MetadataStore, StoreLayout}
import streamctl.system.{SSP, SspValues}

/**
 * The last [[ProgressHistory.Limit]] batch summaries of one source, kept in its metadata store so
 * that `streamctl report` can draw recent lag and watermarks without the query running. Each batch
 * is one small value of its own (`progress/history-<source>/<batch>`, lag as
 * [[streamctl.system.SspValues]]), written once, and the batch [[ProgressHistory.Limit]] before it
 * is deleted: what a batch writes depends on its partitions, never on how long the query ran (a
 * single value rewritten per batch grew to megabytes at a thousand partitions). A replayed batch
 * overwrites its own entry. A history written whole by streamctl before (`history-<source>`) still
 * reads, and goes at the first sweep ([[ProgressHistory.SweepEvery]] batches).
 *
 * {{{
 * val history = new ProgressHistory(store, StoreLayout.Source("0"))
 * history.append(summary)
 * history.load()   // the entries, oldest first, as JSON (lag by SSP key)
 * }}}
 */
final class ProgressHistory(store: MetadataStore, source: StoreLayout.Source) {
  import ProgressHistory._

  private def what(key: String) =
    s"the progress history in ${store.describe(StoreLayout.ProgressNamespace, key)}"

  def append(summary: BatchSummary): Unit = {
    val entry = summary.toJson
    entry.set[JsonNode]("lag", SspValues.json(summary.lag))
    if (summary.lastRecordMs.nonEmpty) {
      /* As milliseconds after the oldest of them: a few digits each instead of thirteen, which at
       * thousands of partitions is most of what a batch writes. */
      val base = summary.lastRecordMs.valuesIterator.min
      entry.put(LastRecordTimesBase, base)
      entry.set[JsonNode](
        LastRecordTimes,
        SspValues.json(summary.lastRecordMs.map { case (s, t) => s -> (t - base) })
      )
    }
    entry.put("version", Version)
    store.put(StoreLayout.ProgressNamespace, source.progressKey(summary.batchId), Json.write(entry))
    val old = summary.batchId - Limit
    if (old >= 0) store.delete(StoreLayout.ProgressNamespace, source.progressKey(old))
    /* Entries a restart or a skipped batch left behind, and a history of the old form, go now and
     * then. */
    if (summary.batchId % SweepEvery == 0) {
      store.delete(StoreLayout.ProgressNamespace, source.legacyProgressKey)
      batchKeys.filter(_._1 <= old).foreach { case (_, k) =>
        store.delete(StoreLayout.ProgressNamespace, k)
      }
    }
  }

  /**
   * Removes every entry: a brand-new query starts its history afresh. Batch ids start again at 0,
   * so entries an earlier checkpoint left in a shared store would otherwise stand for its past (the
   * report would show the old query's last batches, describe its record times) until the new query
   * passed the old one's batch count.
   */
  def clear(): Unit = {
    store.delete(StoreLayout.ProgressNamespace, source.legacyProgressKey)
    batchKeys.foreach { case (_, k) => store.delete(StoreLayout.ProgressNamespace, k) }
  }

  /**
   * The entries, oldest first, as `streamctl report` reads them: lag by the SSP's name, as the
   * `ended` SSPs are named (`{"orders-0": 12}`).
   */
  def load(): Seq[JsonNode] = {
    def lagByName(lag: Map[SSP, Long]): ObjectNode = {
      val n = Json.obj()
      lag.toSeq.sortBy(_._1).foreach { case (s, v) => n.put(s.toString, v) }
      n
    }
    val legacy =
      store.get(StoreLayout.ProgressNamespace, source.legacyProgressKey).toSeq.flatMap { text =>
        val root = Json.parse(text, what(source.legacyProgressKey))
        Json.version(root, 1, what(source.legacyProgressKey))
        Json.field(root, "batches", what(source.legacyProgressKey)).elements().asScala.toSeq.map {
          b =>
            // The first form kept lag by SSP key (`{"kafka/orders/0": 12}`).
            val lag = Option(b.get("lag")).toSeq.flatMap(_.properties().asScala)
              .map(e => SSP.parse(e.getKey) -> e.getValue.asLong).toMap
            b.asInstanceOf[ObjectNode].set[JsonNode]("lag", lagByName(lag))
        }
      }
    val entries = batchKeys.flatMap { case (_, key) =>
      store.get(StoreLayout.ProgressNamespace, key).map { text =>
        val e = Json.parse(text, what(key)).asInstanceOf[ObjectNode]
        Json.version(e, Version, what(key))
        e.remove("version")
        e.set[JsonNode](
          "lag",
          lagByName(SspValues.read(Json.field(e, "lag", what(key)), what(key)))
        )
        e.remove(LastRecordTimes)
        e.remove(LastRecordTimesBase)
        e: JsonNode
      }
    }
    val newer = entries.map(_.get("batch").asLong).toSet
    (legacy.filterNot(b => newer.contains(b.get("batch").asLong)) ++ entries)
      .sortBy(_.get("batch").asLong).takeRight(Limit)
  }

  /**
   * Per SSP, the newest record time (epoch ms) the query processed, as of the last batch kept
   * (empty without history, or from a streamctl that did not keep it).
   */
  def lastRecordTimes(): Map[SSP, Long] =
    batchKeys.lastOption.flatMap { case (_, key) =>
      store.get(StoreLayout.ProgressNamespace, key).flatMap { text =>
        val e = Json.parse(text, what(key))
        Option(e.get(LastRecordTimes)).map { times =>
          val base = Option(e.get(LastRecordTimesBase)).fold(0L)(_.asLong)
          SspValues.read(times, what(key)).map { case (s, t) => s -> (t + base) }
        }
      }
    }.getOrElse(Map.empty)

  // This source's per-batch keys, by batch.
  private def batchKeys: Seq[(Long, String)] =
    store.keys(StoreLayout.ProgressNamespace).flatMap(k =>
      source.progressBatch(k).map(_ -> k)
    ).sortBy(_._1)
}

object ProgressHistory {
  val Version = 2

  // The field of an entry holding [[BatchSummary.lastRecordMs]] (for describe, not the report).
  private val LastRecordTimes = "lastRecordTimeMs"
  /* What LastRecordTimes' values are after (absent: 0, as the first streamctl that kept them
   * wrote). */
  private val LastRecordTimesBase = "lastRecordTimeBaseMs"

  /** Batches kept per source: enough for a picture of the recent past. */
  val Limit = 240

  /** Every this many batches, entries left behind by restarts are swept (one listing). */
  val SweepEvery = 64
}
