package streamctl
package control

import scala.collection.immutable.{SortedMap, SortedSet}
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import streamctl.{Json, StreamctlException}
import streamctl.system.SSP

/**
 * The control bookkeeping of one intermediate SSP: what its upstream producers have said so far. An
 * immutable value, because it is checkpointed with the offsets (in the source's Offset and per
 * (batch, task) in the metadata store) and must come back exactly after a crash.
 *
 * Rules (docs/control-messages.md, "Consumers"; the only place they are implemented):
 *   - `producerCount` is fixed by the first control message; any other count later, from the same
 *     producer or another, is an error: counting towards a moving target would declare
 *     end-of-stream too early or never.
 *   - End-of-stream when every one of `producerCount` producers sent end-of-stream.
 *   - Each producer's watermark only moves forward; an older one is ignored, not an error (a
 *     producer replaying a batch resends older watermarks).
 *   - A producer is idle from its idle message until its next active or watermark message (data
 *     messages carry no producer name, so a producer announces its return before its data). Idle
 *     and active messages carry the producer's watermark when it has one, which counts like a
 *     watermark message.
 *   - The SSP watermark is defined once all `producerCount` producers have reported (by a
 *     watermark, an idle message or end-of-stream). It is the minimum over the active producers:
 *     neither a producer that ended (it sends nothing more) nor an idle one holds it back. With no
 *     active producer left it is the highest watermark reported (every producer ended or is idle:
 *     nothing is on its way).
 *   - The SSP watermark never moves backwards: a producer coming back from idle may be behind the
 *     others, and until it catches up the SSP keeps the highest watermark it had (`floor`,
 *     checkpointed with the rest). Rows that producer writes with older event times are late for a
 *     downstream window whose delay does not cover the gap.
 *   - A watermark, idle or active message from a producer that already sent end-of-stream is
 *     ignored.
 *   - Data messages carry no producer name, so "data after a producer's end-of-stream" is only
 *     detectable once the whole SSP is at end-of-stream ([[checkData]]).
 *   - An end-of-stream that says how many partitions it went to is remembered with that count
 *     (`endedWithin`): the producer never wrote to a partition of the stream numbered at or above
 *     it, so it has ended there too ([[SspControlStates.withEndsBeforeGrowth]]).
 *
 * Idle status is kept as offsets (where each producer last went idle, and where it last came back
 * after that) rather than as a flag, so that [[merge]] stays a union/maximum: for one SSP the later
 * offset is the later message, whatever order results arrive in.
 *
 * {{{
 * val s0 = SspControlState.empty
 * val s1 = s0(WatermarkMessage("p0", 2, 10L), ssp, offset = 7).state
 * s1.watermark                                        // None: p1 has not reported
 * val step = s1(WatermarkMessage("p1", 2, 20L), ssp, 8)
 * step.state.watermark                                // Some(10)
 * step.watermarkAdvanced                              // true
 * step.state(IdleMessage("p0", 2, Some(10L)), ssp, 9).state.watermark  // Some(20): p0 is idle
 * SspControlState.fromJson(Json.parse(step.state.json, "test"), "test") == step.state
 * }}}
 */
final class SspControlState private (
    /** Producer task count announced by the control messages; 0 until the first one. */
    val producerCount: Int,
    val endOfStreamProducers: SortedSet[String],
    /** Latest watermark per producer, epoch ms. */
    val producerWatermarks: SortedMap[String, Long],
    /** Per producer, the offset of the idle message that last made it idle. */
    val idleAt: SortedMap[String, Long],
    /** Per producer, the offset of the latest active or watermark message after it went idle. */
    val activeAt: SortedMap[String, Long],
    floorIn: Option[Long],
    /**
     * Per producer that ended, the partition count its end-of-stream was sent to, when it said.
     */
    val endedWithin: SortedMap[String, Int]
) {

  private val known: SortedSet[String] =
    endOfStreamProducers ++ producerWatermarks.keySet ++ idleAt.keySet

  /** Distinct producers heard from (by watermark, idle message or end-of-stream). */
  val producers: Int = known.size

  def isEndOfStream: Boolean = producerCount > 0 && endOfStreamProducers.size == producerCount

  private def isIdleProducer(p: String): Boolean =
    !endOfStreamProducers.contains(p) && idleAt.get(p).exists(i => activeAt.get(p).forall(_ < i))

  /** Producers that neither ended nor are idle. */
  private lazy val activeProducers: SortedSet[String] =
    known.filter(p => !endOfStreamProducers.contains(p) && !isIdleProducer(p))

  /** The idle producers (end-of-stream ones excluded), for metrics. */
  def idleProducers: SortedSet[String] = known.filter(isIdleProducer)

  private val reconciled: Option[Long] =
    if (producerCount == 0 || producers < producerCount) None
    else if (activeProducers.nonEmpty) {
      // A producer known only from an idle message that came back without a watermark has none yet.
      if (activeProducers.forall(producerWatermarks.contains))
        Some(activeProducers.iterator.map(producerWatermarks).min)
      else None
    } else producerWatermarks.valuesIterator.maxOption

  /** The highest SSP watermark so far, kept only while the reconciled value is below it. */
  val floor: Option[Long] = floorIn.filter(f => reconciled.forall(f > _))

  /**
   * The SSP's input watermark (epoch ms), once all producers have reported; never moves backwards.
   */
  val watermark: Option[Long] = floor.orElse(reconciled)

  /**
   * Every producer reported and none is active, yet not every one ended: nothing is on its way for
   * now.
   */
  def isIdle: Boolean =
    producerCount > 0 && producers >= producerCount && !isEndOfStream && activeProducers.isEmpty

  def endOfStreamCount: Int = endOfStreamProducers.size

  /**
   * Applies a control message read at `offset` of `ssp`. The result says whether the SSP watermark
   * advanced, which is when a new watermark is to be emitted.
   */
  def apply(message: ControlMessage, ssp: SSP, offset: Long): SspControlState.Applied = {
    val producer = message.producer
    if (producerCount != 0 && message.producerCount != producerCount)
      throw ControlErrors.at(
        ssp,
        offset,
        s"producer '$producer' says taskCount ${message.producerCount}, but earlier control messages on this partition " +
          s"said $producerCount; the upstream query changed its parallelism without starting a new intermediate stream " +
          "(or two queries write to it)"
      )
    if (!known.contains(producer) && producers >= message.producerCount)
      throw ControlErrors.at(
        ssp,
        offset,
        s"control message from producer '$producer', but all ${message.producerCount} producers are already known " +
          s"(${known.mkString(", ")}); more producer names than taskCount"
      )

    val ended = endOfStreamProducers.contains(producer)
    def withWatermark(ts: Option[Long]): SortedMap[String, Long] = ts match {
      case Some(t) if producerWatermarks.get(producer).forall(_ < t) =>
        producerWatermarks.updated(producer, t)
      case _ => producerWatermarks
    }
    // Back from idle: recorded only for a producer that is idle, so a busy one adds nothing.
    def back: SortedMap[String, Long] =
      if (isIdleProducer(producer)) activeAt.updated(producer, offset) else activeAt
    def next(
        eos: SortedSet[String] = endOfStreamProducers,
        wm: SortedMap[String, Long] = producerWatermarks,
        idle: SortedMap[String, Long] = idleAt,
        active: SortedMap[String, Long] = activeAt,
        within: SortedMap[String, Int] = endedWithin
    ): SspControlState =
      if (
        (eos eq endOfStreamProducers) && (wm eq producerWatermarks) && (idle eq idleAt) && (active eq activeAt)
      ) this
      else new SspControlState(message.producerCount, eos, wm, idle, active, watermark, within)

    val after = message match {
      case _ if ended => this // a replayed end-of-stream, or anything after it
      case e: EndOfStreamMessage => next(
          eos = endOfStreamProducers + producer,
          within = e.partitions.fold(endedWithin)(endedWithin.updated(producer, _))
        )
      case w: WatermarkMessage => next(wm = withWatermark(Some(w.timestamp)), active = back)
      case a: ActiveMessage => next(wm = withWatermark(a.watermark), active = back)
      case i: IdleMessage =>
        next(
          wm = withWatermark(i.watermark),
          idle = if (isIdleProducer(producer)) idleAt else idleAt.updated(producer, offset)
        )
    }
    SspControlState.Applied(after, SspControlState.advances(watermark, after.watermark))
  }

  /**
   * This state with `ended` (producer -> the partition count its end-of-stream went to) counted as
   * having ended here too, for a partition they never wrote to. Producers known here otherwise are
   * left as they are: what the partition itself said wins.
   */
  private[control] def withEnded(ended: Map[String, Int], count: Int, ssp: SSP): SspControlState = {
    val added = ended.filter { case (p, _) => !known.contains(p) }
    if (added.isEmpty) this
    else {
      if (producerCount != 0 && producerCount != count)
        throw StreamctlException(
          s"Intermediate ${ControlErrors.where(ssp)}: its producers say taskCount $producerCount, but the " +
            s"end-of-stream of ${added.keys.mkString(", ")} on the stream's other partitions said $count"
        )
      /* What those producers' end-of-stream would have recorded here, combined as any two states
       * are. */
      val ends = new SspControlState(
        count,
        SortedSet.empty[String] ++ added.keys,
        SortedMap.empty,
        SortedMap.empty,
        SortedMap.empty,
        None,
        SortedMap.empty[String, Int] ++ added
      )
      merge(ends, ssp)
    }
  }

  /**
   * Called for a user (data) message read at `offset`: an error once the SSP is at end-of-stream,
   * since every producer promised to send nothing more.
   */
  def checkData(ssp: SSP, offset: Long): Unit =
    if (isEndOfStream)
      throw ControlErrors.at(
        ssp,
        offset,
        s"data message after end-of-stream: all $producerCount producers (${endOfStreamProducers.mkString(", ")}) " +
          "sent end-of-stream earlier on this partition, so a producer wrote after its end-of-stream " +
          "(an upstream batch replayed without transactions, or a second query writing to the stream?)"
      )

  /**
   * Combines two results for the same SSP, e.g. from several tasks reading a broadcast SSP, or a
   * previous batch's state with a newer one. Union of end-of-stream producers, per-producer maximum
   * watermark and idle/active offsets, and the higher of the two SSP watermarks as the floor:
   * commutative and idempotent, and for states that extend one another (the driver's case: every
   * result starts from the previous state) the outcome does not depend on the order results are
   * loaded in. The merged SSP watermark is never below either input's.
   */
  def merge(other: SspControlState, ssp: SSP): SspControlState = {
    if (producerCount != 0 && other.producerCount != 0 && producerCount != other.producerCount)
      throw StreamctlException(
        s"Intermediate ${ControlErrors.where(ssp)}: control states to combine disagree on taskCount " +
          s"($producerCount vs ${other.producerCount})"
      )
    val count = math.max(producerCount, other.producerCount)
    val merged = new SspControlState(
      count,
      endOfStreamProducers ++ other.endOfStreamProducers,
      SspControlState.maxByKey(producerWatermarks, other.producerWatermarks),
      SspControlState.maxByKey(idleAt, other.idleAt),
      SspControlState.maxByKey(activeAt, other.activeAt),
      (watermark ++ other.watermark).maxOption,
      SspControlState.maxByKey(endedWithin, other.endedWithin)
    )
    if (merged.producers > count && count > 0)
      throw StreamctlException(
        s"Intermediate ${ControlErrors.where(ssp)}: control states to combine name ${merged.producers} producers " +
          s"(${merged.known.mkString(", ")}) but taskCount is $count"
      )
    merged
  }

  /**
   * Compact JSON: `{"n":3,"eos":["p0"],"wm":{"p1":10}}` plus `idle`, `active` and `floor` once a
   * producer was idle, and `within` once an end-of-stream said its partition count.
   */
  def toJson: ObjectNode = {
    val node = Json.obj()
    if (producerCount != 0) node.put("n", producerCount)
    if (endOfStreamProducers.nonEmpty) {
      val eos = node.putArray("eos")
      endOfStreamProducers.foreach(p => eos.add(p))
    }
    def putMap(name: String, m: SortedMap[String, Long]): Unit =
      if (m.nonEmpty) {
        val o = node.putObject(name)
        m.foreach { case (p, v) => o.put(p, v) }
      }
    putMap("wm", producerWatermarks)
    putMap("idle", idleAt)
    putMap("active", activeAt)
    floor.foreach(node.put("floor", _))
    if (endedWithin.nonEmpty) {
      val o = node.putObject("within")
      endedWithin.foreach { case (p, n) => o.put(p, n) }
    }
    node
  }

  def json: String = Json.write(toJson)

  override def equals(other: Any): Boolean = other match {
    case o: SspControlState =>
      producerCount == o.producerCount && endOfStreamProducers == o.endOfStreamProducers &&
      producerWatermarks == o.producerWatermarks && idleAt == o.idleAt && activeAt == o.activeAt &&
      floor == o.floor && endedWithin == o.endedWithin
    case _ => false
  }

  override def hashCode: Int =
    (
      producerCount,
      endOfStreamProducers,
      producerWatermarks,
      idleAt,
      activeAt,
      floor,
      endedWithin
    ).##

  override def toString: String =
    s"SspControlState(producerCount=$producerCount, eos=${endOfStreamProducers.mkString("[", ",", "]")}, " +
      s"watermarks=${producerWatermarks.mkString("{", ",", "}")}, idle=${idleProducers.mkString("[", ",", "]")}, " +
      s"watermark=${watermark.getOrElse("none")})"
}

object SspControlState {

  /**
   * The result of [[SspControlState.apply]]: the new state, and whether the SSP watermark advanced.
   */
  final case class Applied(state: SspControlState, watermarkAdvanced: Boolean)

  val empty: SspControlState =
    new SspControlState(
      0,
      SortedSet.empty,
      SortedMap.empty,
      SortedMap.empty,
      SortedMap.empty,
      None,
      SortedMap.empty
    )

  private[control] def advances(before: Option[Long], after: Option[Long]): Boolean =
    after.exists(a => before.forall(a > _))

  private def maxByKey[V](
      a: SortedMap[String, V],
      b: SortedMap[String, V]
  )(implicit order: Ordering[V]): SortedMap[String, V] =
    if (b.isEmpty) a
    else b.foldLeft(a) { case (acc, (k, v)) => acc.updated(k, acc.get(k).fold(v)(order.max(_, v))) }

  private val fields = Set("n", "eos", "wm", "idle", "active", "floor", "within")

  /**
   * Reads what [[SspControlState.toJson]] wrote. `what` names the origin in errors (e.g. "control
   * state of kafka/orders/3 in offset log batch 12"). Unknown fields are an error rather than
   * skipped: they would come from a newer streamctl whose bookkeeping this one cannot honour.
   * States written before idle producers existed (no `idle`, `active` or `floor`) read as states
   * without idle producers.
   */
  def fromJson(node: JsonNode, what: String): SspControlState = {
    def bad(problem: String) =
      StreamctlException(s"Bad control state in $what: $problem: ${Json.write(node)}")
    if (node == null || !node.isObject) throw bad("not a JSON object")
    node.properties.asScala.map(_.getKey).find(f => !fields.contains(f)).foreach(f =>
      throw bad(s"unknown field '$f'")
    )

    val n = Option(node.get("n")).map { f =>
      if (!f.isIntegralNumber || !f.canConvertToInt || f.intValue < 1)
        throw bad("'n' must be an integer >= 1")
      f.intValue
    }.getOrElse(0)
    val eos = Option(node.get("eos")).map { f =>
      if (!f.isArray) throw bad("'eos' must be an array of producer names")
      f.elements.asScala.map { e =>
        if (!e.isTextual || e.asText.isEmpty) throw bad("'eos' must hold non-empty strings")
        e.asText
      }.to(SortedSet)
    }.getOrElse(SortedSet.empty[String])
    def producerMap(name: String, values: String): SortedMap[String, Long] =
      Option(node.get(name)).map { f =>
        val problem = s"'$name' must map producer names to $values"
        if (!f.isObject) throw bad(problem)
        SortedMap.from(f.properties.asScala.map { e =>
          val v = e.getValue
          if (e.getKey.isEmpty || !v.isIntegralNumber || !v.canConvertToLong) throw bad(problem)
          e.getKey -> v.longValue
        })
      }.getOrElse(SortedMap.empty[String, Long])
    val wm = producerMap("wm", "epoch ms")
    val idle = producerMap("idle", "offsets")
    val active = producerMap("active", "offsets")
    val floor = Option(node.get("floor")).map { f =>
      if (!f.isIntegralNumber || !f.canConvertToLong) throw bad("'floor' must be epoch ms")
      f.longValue
    }
    val within = producerMap("within", "partition counts").map { case (p, c) =>
      if (c < 1 || c > Int.MaxValue)
        throw bad("'within' must map producer names to partition counts")
      p -> c.toInt
    }

    val state = new SspControlState(n, eos, wm, idle, active, floor, within)
    if (!active.keySet.subsetOf(idle.keySet))
      throw bad("'active' names producers that were never idle")
    if (!within.keySet.subsetOf(eos))
      throw bad("'within' names producers that did not end")
    if (n == 0 && state.producers > 0) throw bad("producers recorded without 'n'")
    if (state.producers > n) throw bad(s"${state.producers} producers recorded but 'n' is $n")
    state
  }

  def parse(text: String, what: String): SspControlState = fromJson(Json.parse(text, what), what)
}
