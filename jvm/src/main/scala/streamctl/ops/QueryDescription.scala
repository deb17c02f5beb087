package streamctl.ops

import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.hadoop.conf.Configuration

import streamctl.{Json, StreamctlException}
import streamctl.control.{
  ControlState,
  ControlResults,
  SspControlState,
  SspControlStates,
  WatermarkSummary
}
import streamctl.grouper.TaskOrder
import streamctl.locality.TaskLocalityStore
import streamctl.metadata.{MetadataStore, StoreLayout}
import streamctl.startpoint.{StartpointCommands, StartpointEntry}
import streamctl.system.{SSP, SystemAdmin, TaskName, TimeLag}

/**
 * `streamctl describe`: what a query has done and where it stands, from its checkpoint (the offset
 * and commit logs, [[QueryCheckpoint]]), its metadata store (pending startpoints, task locality,
 * control results) and, when it answers, the broker (log-end offsets, lag). One row per (source,
 * task, SSP), as JSON for the CLI and Python to format.
 *
 * The control states shown are the reconciled ones after the last committed batch: the offset's
 * states merged with the readers' results of that batch ([[ControlResults.statesAfter]]), exactly
 * what the next batch is planned from.
 *
 * {{{
 * QueryDescription.describe(checkpoint = "/chk/q1", storePath = None, admin = Some(kafkaAdmin), conf)
 * // {"checkpoint":"/chk/q1","committedBatch":14,"watermarkMs":...,"partitions":[{"source":"0","stream":"orders",...}]}
 * }}}
 */
object QueryDescription {

  /**
   * The description, read again when the query committed a batch meanwhile: a running query deletes
   * a batch's control results once a later batch commits, so results listed for the checkpoint as
   * first read may be gone when fetched (or gone before they were listed). Each read is of one
   * committed batch; three in a row that each lose the race give up with the last error.
   */
  def describe(
      checkpoint: String,
      storePath: Option[String],
      admin: => Option[SystemAdmin],
      conf: Configuration,
      openStore: String => MetadataStore = null
  ): ObjectNode = {
    val location = StoreLayout.locate(Some(checkpoint), storePath).get
    if (!QueryCheckpoint.exists(checkpoint, conf))
      throw StreamctlException(s"No streamctl query at $checkpoint: it holds no Spark checkpoint (no 'offsets' or 'metadata'). " +
        "Give the query's checkpointLocation")
    val open = Option(openStore).getOrElse((l: String) => MetadataStore.open(l, conf))
    def committedId = QueryCheckpoint.read(checkpoint, conf).committed.map(_.batchId)
    @scala.annotation.tailrec
    def attempt(n: Int): ObjectNode = {
      val ck = QueryCheckpoint.read(checkpoint, conf)
      val answer =
        try Right(describeAt(ck, checkpoint, location, admin, open(location)))
        catch { case e: StreamctlException => Left(e) }
      if (n < 3 && committedId != ck.committed.map(_.batchId)) attempt(n + 1)
      else answer.fold(e => throw e, identity)
    }
    attempt(1)
  }

  private def describeAt(
      ck: QueryCheckpoint,
      checkpoint: String,
      location: String,
      admin: => Option[SystemAdmin],
      store: MetadataStore
  ): ObjectNode = {
    try {
      val latest = ck.committed.orElse(ck.pending)
      if (latest.exists(_.sources.isEmpty))
        throw StreamctlException(
          s"The query at $checkpoint has no streamctl source (its offset log holds no streamctl offset)"
        )
      val root = Json.obj()
      root.put("checkpoint", checkpoint)
      root.put("store", location)
      ck.committed.foreach { b =>
        root.put("committedBatch", b.batchId)
        root.put("committedAtMs", b.timestampMs)
        root.put("watermarkMs", b.watermarkMs)
      }
      ck.pending.foreach(b => root.put("pendingBatch", b.batchId))
      val pending = pendingStartpoints(store, location)
      val rows =
        latest.toSeq.flatMap(b => b.sources.toSeq.sortBy(_._1)).flatMap { case (source, position) =>
          val keys = StoreLayout.Source(source)
          val committed = ck.committed.flatMap(_.sources.get(source))
          val ctl = committed.orElse(Some(position)).flatMap(_.state.get(ControlState.Codec))
          val states = ctl.map(c =>
            new ControlResults(store, keys.controlNamespace).statesAfter(c)
          ).getOrElse(Map.empty)
          val locality = new TaskLocalityStore(store, keys.localityKey).load()
          position.tasks.toSeq.sortBy(_._1)(TaskOrder).flatMap { case (task, ssps) =>
            ssps.keys.toSeq.sorted.map(ssp =>
              Row(
                source,
                task,
                ssp,
                committed.flatMap(_.tasks.get(task)).flatMap(_.get(ssp)),
                locality.executorOf(task).map(_.location),
                states.get(ssp)
              )
            )
          }
        }.sortBy(r => (r.source, r.ssp))
      val heads: Either[String, Map[SSP, Long]] =
        try admin.map(a => Right(a.upcomingOffsets(rows.map(_.ssp).toSet))).getOrElse(Left(
            "no bootstrap servers given"
          ))
        catch { case e: StreamctlException => Left(e.getMessage) }
      heads match {
        case Right(_) => root.put("broker", "reachable")
        case Left(why) => root.put("broker", why)
      }
      // Seconds behind: the newest record time on the broker where records are left, against
      // the newest the query processed (its progress history keeps that).
      val behind = rows.collect {
        case r if r.committed.exists(c => heads.toOption.flatMap(_.get(r.ssp)).exists(_ > c)) =>
          r.ssp
      }.toSet
      val newest: Map[SSP, Long] =
        if (behind.isEmpty) Map.empty
        else
          try admin.fold(Map.empty[SSP, Long])(_.newestTimestampsAsked(behind)())
          catch { case _: StreamctlException => Map.empty }
      // The history is a picture for people: one that does not read leaves the figure out.
      val processed = rows.map(_.source).distinct.map { s =>
        val times =
          if (behind.isEmpty) Map.empty[SSP, Long]
          else
            try new ProgressHistory(store, StoreLayout.Source(s)).lastRecordTimes()
            catch { case _: StreamctlException => Map.empty[SSP, Long] }
        s -> times
      }.toMap
      val arr = root.putArray("partitions")
      rows.foreach { r =>
        val n = arr.addObject()
        n.put(
          "source",
          r.source
        ).put("stream", r.ssp.stream).put("partition", r.ssp.partition).put("task", r.task.name)
        r.executor.fold(n.putNull("executor"))(n.put("executor", _))
        r.committed.fold(n.putNull("committed"))(n.put("committed", _))
        heads.toOption.flatMap(_.get(r.ssp)) match {
          case Some(end) =>
            n.put("logEnd", end)
            r.committed.fold(n.putNull("lag"))(c => n.put("lag", TimeLag.recordsBehind(end, c)))
            r.committed.flatMap(c =>
              TimeLag.secondsBehind(end - c, newest.get(r.ssp), processed(r.source).get(r.ssp))
            ).fold(n.putNull("secondsBehind"))(n.put("secondsBehind", _))
          case None => n.putNull("logEnd"); n.putNull("lag"); n.putNull("secondsBehind")
        }
        val sp = n.putArray("pendingStartpoints")
        pending.filter(p => p.key.ssp == r.ssp && p.key.task.forall(_ == r.task)).foreach(p =>
          sp.add(p.description)
        )
        r.control.foreach { s =>
          val c = n.putObject("control")
          c.put("producers", s.producerCount)
          val eos = c.putArray("endOfStreamProducers")
          s.endOfStreamProducers.foreach(eos.add)
          c.put("endOfStream", s.isEndOfStream)
          val idle = c.putArray("idleProducers")
          s.idleProducers.foreach(idle.add)
          s.watermark.fold(c.putNull("watermarkMs"))(c.put("watermarkMs", _))
        }
      }
      // Startpoints for SSPs the query does not read (yet): shown, not lost.
      val read = rows.map(_.ssp).toSet
      val other = root.putArray("otherStartpoints")
      pending.filterNot(p => read.contains(p.key.ssp)).foreach(p =>
        other.add(s"${p.key}: ${p.description}")
      )
      val controlled = rows.flatMap(_.control)
      if (controlled.nonEmpty) {
        val up = root.putObject("upstream")
        WatermarkSummary.of(controlled).watermark.fold(up.putNull("watermarkMs"))(up.put(
          "watermarkMs",
          _
        ))
        up.put(
          "endOfStream",
          SspControlStates.allEndOfStream(
            rows.map(_.ssp),
            s => rows.find(_.ssp == s).flatMap(_.control)
          )
        )
      }
      root
    } finally store.close()
  }

  private final case class Row(
      source: String,
      task: TaskName,
      ssp: SSP,
      committed: Option[Long],
      executor: Option[String],
      control: Option[SspControlState]
  )

  /* A corrupt startpoint (or a key not in canonical form) is shown as "corrupt: <why>", as
   * `startpoints list` shows it: the query refuses to start on it, and describe is where an
   * operator looks first, so it must not fail as a whole. */
  private def pendingStartpoints(store: MetadataStore, location: String): Seq[StartpointEntry] =
    new StartpointCommands(store, None, location).list()
}
