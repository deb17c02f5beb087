package streamctl.startpoint

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode

import streamctl.Json
import streamctl.plan.StateCodec
import streamctl.system.{SSP, TaskName}

/**
 * The startpoints a batch applied, kept in that batch's end offset (state `startpoints`). It is what lets a restart tell a startpoint that a
 * logged batch already applied (delete it once that batch committed, never apply it twice)
 * from one a user wrote since (apply it). The resolved offsets themselves are in the
 * offset's `starts`; they are repeated here so the offset log says why a batch began where
 * it did.
 *
 * Grouped by startpoint, because an SSP-only startpoint of a broadcast stream becomes one
 * copy per task, all equal:
 * {{{
 * {"version":1,"applied":[{"startpoint":{"version":1,"type":"oldest","creationTime":1700000000000},
 *   "ssps":{"kafka/orders/0":{"offset":0,"tasks":["Partition 0"]}}}]}
 * }}}
 * An SSP whose timestamp startpoint found no message at or after its time carries
 * `"endOfPartition":true`. Its own `version` predates the offset's (see
 * [[streamctl.plan.StateCodec]]) and is kept so that offsets written with it read the same.
 */
final case class AppliedStartpoints(applied: Map[(SSP, TaskName), Resolution]) {
  def isEmpty: Boolean = applied.isEmpty

  /** What each (SSP, task) applied, as [[StartpointManager.removeFannedOut]] takes it. */
  def startpoints: Map[(SSP, TaskName), Startpoint] = applied.map { case (k, r) =>
    k -> r.startpoint
  }
}

object AppliedStartpoints {
  val Version = 1

  val empty: AppliedStartpoints = AppliedStartpoints(Map.empty)

  object Codec extends StateCodec[AppliedStartpoints] {
    val key = "startpoints"
    val empty: AppliedStartpoints = AppliedStartpoints.empty

    def write(s: AppliedStartpoints): JsonNode = {
      val root = Json.obj()
      root.put("version", AppliedStartpoints.Version)
      val list = root.putArray("applied")
      val byStartpoint = s.applied.toSeq.groupBy(_._2.startpoint).toSeq.sortBy { case (sp, _) =>
        (sp.creationTimeMs, StartpointJson.write(sp))
      }
      byStartpoint.foreach { case (sp, entries) =>
        val e = list.addObject()
        e.set[JsonNode]("startpoint", Json.parse(StartpointJson.write(sp), "a startpoint"))
        val ssps = e.putObject("ssps")
        entries.groupBy(_._1._1).toSeq.sortBy(_._1).foreach { case (ssp, perTask) =>
          val n = ssps.putObject(ssp.key)
          val r = perTask.head._2
          n.put("offset", r.offset)
          if (r.beyondData) n.put("endOfPartition", true)
          val tasks = n.putArray("tasks")
          perTask.map(_._1._2.name).sorted.foreach(t => tasks.add(t))
        }
      }
      root
    }

    def read(node: JsonNode, what: String): AppliedStartpoints = {
      Json.version(node, Version, what)
      val entries = Json.field(node, "applied", what).elements().asScala.flatMap { e =>
        val sp = StartpointJson.read(Json.write(Json.field(e, "startpoint", what)), what)
        Json.field(e, "ssps", what).properties().asScala.flatMap { p =>
          val ssp = SSP.parse(p.getKey)
          val v = p.getValue
          val r = Resolution(
            ssp,
            sp,
            Json.field(v, "offset", what).asLong(),
            Option(v.get("endOfPartition")).exists(_.asBoolean())
          )
          Json.field(v, "tasks", what).elements().asScala.map(t => (ssp, TaskName(t.asText())) -> r)
        }
      }
      AppliedStartpoints(entries.toMap)
    }
  }
}
