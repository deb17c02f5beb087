package streamctl.startpoint

import scala.collection.mutable

import streamctl.StreamctlException
import streamctl.system.{SSP, SystemAdmin}

/**
 * A system held in memory: each partition is its oldest offset plus the timestamps of the
 * messages from there on. Counts calls, so tests can check that resolution is bulk.
 */
class FakeSystemAdmin(val system: String = SSP.KafkaSystem) extends SystemAdmin {
  private val partitions = mutable.LinkedHashMap.empty[SSP, (Long, Vector[Long])]
  val calls: mutable.Map[String, Int] = mutable.Map.empty.withDefaultValue(0)

  def add(ssp: SSP, oldest: Long, timestamps: Seq[Long]): this.type = { partitions(ssp) = (oldest, timestamps.toVector); this }

  override def partitionCounts(streams: Set[String]): Map[String, Int] = {
    calls("partitionCounts") += 1
    streams.map { s =>
      val ps = partitions.keys.filter(_.stream == s)
      if (ps.isEmpty) throw StreamctlException(s"Stream '$s' does not exist")
      s -> (ps.map(_.partition).max + 1)
    }.toMap
  }

  override def oldestOffsets(ssps: Set[SSP]): Map[SSP, Long] = {
    calls("oldestOffsets") += 1
    ssps.flatMap(s => partitions.get(s).map(p => s -> p._1)).toMap
  }

  override def upcomingOffsets(ssps: Set[SSP]): Map[SSP, Long] = {
    calls("upcomingOffsets") += 1
    ssps.flatMap(s => partitions.get(s).map(p => s -> (p._1 + p._2.size))).toMap
  }

  override def offsetsForTimestamps(timestamps: Map[SSP, Long]): Map[SSP, Long] = {
    calls("offsetsForTimestamps") += 1
    timestamps.flatMap { case (s, t) =>
      partitions.get(s).map { case (oldest, ts) =>
        val i = ts.indexWhere(_ >= t)
        s -> (oldest + (if (i < 0) ts.size else i))
      }
    }
  }
}
