package streamctl.control

import scala.collection.immutable.{SortedMap, SortedSet}
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import streamctl.{Json, StreamctlException}
import streamctl.system.SSP

/**
 * The control bookkeeping of one intermediate SSP: what its upstream producers have
 * said so far. An immutable value, because it is checkpointed with the offsets (in the
 * source's Offset and per (batch, task) in the metadata store) and must come back
 * exactly after a crash.
 *
 * Rules (DESIGN.md, "Reconciliation"):
 *  - `taskCount` is fixed by the first control message; any other count later, from
 *    the same producer or another, is an error: counting towards a moving target
 *    would declare end-of-stream too early or never.
 *  - End-of-stream when every one of `taskCount` producers sent end-of-stream.
 *  - Each producer's watermark only moves forward; an older one is ignored, not an error
 *    (a producer replaying a batch resends older watermarks).
 *  - The SSP watermark is the minimum over producers, defined once all `taskCount`
 *    producers have reported. A producer that sent end-of-stream counts as reported and
 *    no longer holds the minimum back: it will send nothing more, so waiting for it
 *    would stall the SSP forever. Once all producers ended, the watermark is the highest
 *    one reported. Under these rules the SSP watermark never moves backwards.
 *  - A watermark from a producer that already sent end-of-stream is ignored.
 *  - Data messages carry no producer name, so "data after a producer's end-of-stream"
 *    is only detectable once the whole SSP is at end-of-stream ([[checkData]]).
 *
 * {{{
 * val s0 = ControlState.empty
 * val s1 = s0(WatermarkMessage("p0", 2, 10L), ssp, offset = 7).state
 * s1.watermark                                        // None: p1 has not reported
 * val step = s1(WatermarkMessage("p1", 2, 20L), ssp, 8)
 * step.state.watermark                                // Some(10)
 * step.watermarkAdvanced                              // true
 * ControlState.fromJson(Json.parse(step.state.json, "test"), "test") == step.state
 * }}}
 */
final class ControlState private (
    /** Producer task count announced by the control messages; 0 until the first one. */
    val taskCount: Int,
    val endOfStreamProducers: SortedSet[String],
    /** Latest watermark per producer, epoch ms. */
    val producerWatermarks: SortedMap[String, Long]) {

  /** Distinct producers heard from (by watermark or end-of-stream). */
  val producers: Int =
    endOfStreamProducers.size + producerWatermarks.keysIterator.count(p => !endOfStreamProducers.contains(p))

  def isEndOfStream: Boolean = taskCount > 0 && endOfStreamProducers.size == taskCount

  /** The SSP's input watermark (epoch ms), once all producers have reported. */
  val watermark: Option[Long] =
    if (taskCount == 0 || producers < taskCount) None
    else {
      // Every producer reported, so each live (not ended) producer has a watermark entry.
      val live = producerWatermarks.iterator.filter { case (p, _) => !endOfStreamProducers.contains(p) }.map(_._2)
      if (live.hasNext) Some(live.min)
      else if (producerWatermarks.isEmpty) None
      else Some(producerWatermarks.valuesIterator.max)
    }

  def endOfStreamCount: Int = endOfStreamProducers.size
  def watermarkCount: Int = producerWatermarks.size

  /**
   * Applies a control message read at `offset` of `ssp`. The result says whether the
   * SSP watermark advanced, which is when a new watermark is to be emitted.
   */
  def apply(message: ControlMessage, ssp: SSP, offset: Long): ControlState.Applied = {
    val producer = message.taskName
    if (taskCount != 0 && message.taskCount != taskCount)
      throw ControlErrors.at(ssp, offset,
        s"producer '$producer' says taskCount ${message.taskCount}, but earlier control messages on this partition " +
          s"said $taskCount; the upstream query changed its parallelism without starting a new intermediate stream " +
          "(or two queries write to it)")
    val known = endOfStreamProducers.contains(producer) || producerWatermarks.contains(producer)
    if (!known && producers >= message.taskCount)
      throw ControlErrors.at(ssp, offset,
        s"control message from producer '$producer', but all ${message.taskCount} producers are already known " +
          s"(${knownProducers.mkString(", ")}); more producer names than taskCount")

    // A known producer implies taskCount is already set, so "unchanged" can return this.
    val next = message match {
      case _: EndOfStreamMessage =>
        if (endOfStreamProducers.contains(producer)) this // a replayed end-of-stream
        else new ControlState(message.taskCount, endOfStreamProducers + producer, producerWatermarks)
      case w: WatermarkMessage =>
        val ignored = endOfStreamProducers.contains(producer) ||
          producerWatermarks.get(producer).exists(_ >= w.timestamp)
        if (ignored) this
        else new ControlState(message.taskCount, endOfStreamProducers, producerWatermarks.updated(producer, w.timestamp))
    }
    ControlState.Applied(next, ControlState.advances(watermark, next.watermark))
  }

  /**
   * Called for a user (data) message read at `offset`: an error once the SSP is at
   * end-of-stream, since every producer promised to send nothing more.
   */
  def checkData(ssp: SSP, offset: Long): Unit =
    if (isEndOfStream)
      throw ControlErrors.at(ssp, offset,
        s"data message after end-of-stream: all $taskCount producers (${endOfStreamProducers.mkString(", ")}) " +
          "sent end-of-stream earlier on this partition, so a producer wrote after its end-of-stream " +
          "(an upstream batch replayed without transactions, or a second query writing to the stream?)")

  /**
   * Combines two results for the same SSP, e.g. from several tasks reading a broadcast
   * SSP, or a previous batch's state with a newer one. Union of end-of-stream producers
   * and per-producer maximum watermark: commutative, associative and idempotent, so the
   * outcome does not depend on the order results are loaded in.
   */
  def merge(other: ControlState, ssp: SSP): ControlState = {
    if (taskCount != 0 && other.taskCount != 0 && taskCount != other.taskCount)
      throw StreamctlException(
        s"Intermediate ${ControlErrors.where(ssp)}: control states to combine disagree on taskCount " +
          s"($taskCount vs ${other.taskCount})")
    val count = math.max(taskCount, other.taskCount)
    val watermarks = other.producerWatermarks.foldLeft(producerWatermarks) { case (acc, (p, ts)) =>
      acc.updated(p, acc.get(p).fold(ts)(math.max(_, ts)))
    }
    val merged = new ControlState(count, endOfStreamProducers ++ other.endOfStreamProducers, watermarks)
    if (merged.producers > count && count > 0)
      throw StreamctlException(
        s"Intermediate ${ControlErrors.where(ssp)}: control states to combine name ${merged.producers} producers " +
          s"(${merged.knownProducers.mkString(", ")}) but taskCount is $count")
    merged
  }

  private def knownProducers: SortedSet[String] = endOfStreamProducers ++ producerWatermarks.keySet

  /** Compact JSON: `{"n":3,"eos":["p0"],"wm":{"p1":10}}`; the empty state is `{}`. */
  def toJson: ObjectNode = {
    val node = Json.obj()
    if (taskCount != 0) node.put("n", taskCount)
    if (endOfStreamProducers.nonEmpty) {
      val eos = node.putArray("eos")
      endOfStreamProducers.foreach(p => eos.add(p))
    }
    if (producerWatermarks.nonEmpty) {
      val wm = node.putObject("wm")
      producerWatermarks.foreach { case (p, ts) => wm.put(p, ts) }
    }
    node
  }

  def json: String = Json.write(toJson)

  override def equals(other: Any): Boolean = other match {
    case o: ControlState =>
      taskCount == o.taskCount && endOfStreamProducers == o.endOfStreamProducers &&
        producerWatermarks == o.producerWatermarks
    case _ => false
  }

  override def hashCode: Int = (taskCount, endOfStreamProducers, producerWatermarks).##

  override def toString: String =
    s"ControlState(taskCount=$taskCount, eos=${endOfStreamProducers.mkString("[", ",", "]")}, " +
      s"watermarks=${producerWatermarks.mkString("{", ",", "}")}, watermark=${watermark.getOrElse("none")})"
}

object ControlState {
  /** The result of [[ControlState.apply]]: the new state, and whether the SSP watermark advanced. */
  final case class Applied(state: ControlState, watermarkAdvanced: Boolean)

  val empty: ControlState = new ControlState(0, SortedSet.empty, SortedMap.empty)

  private[control] def advances(before: Option[Long], after: Option[Long]): Boolean =
    after.exists(a => before.forall(a > _))

  private val fields = Set("n", "eos", "wm")

  /**
   * Reads what [[ControlState.toJson]] wrote. `what` names the origin in errors (e.g.
   * "control state of kafka/orders/3 in offset log batch 12"). Unknown fields are an
   * error rather than skipped: they would come from a newer streamctl whose bookkeeping
   * this one cannot honour.
   */
  def fromJson(node: JsonNode, what: String): ControlState = {
    def bad(problem: String) = StreamctlException(s"Bad control state in $what: $problem: ${Json.write(node)}")
    if (node == null || !node.isObject) throw bad("not a JSON object")
    node.properties.asScala.map(_.getKey).find(f => !fields.contains(f)).foreach(f => throw bad(s"unknown field '$f'"))

    val n = Option(node.get("n")).map { f =>
      if (!f.isIntegralNumber || !f.canConvertToInt || f.intValue < 1) throw bad("'n' must be an integer >= 1")
      f.intValue
    }.getOrElse(0)
    val eos = Option(node.get("eos")).map { f =>
      if (!f.isArray) throw bad("'eos' must be an array of producer names")
      f.elements.asScala.map { e =>
        if (!e.isTextual || e.asText.isEmpty) throw bad("'eos' must hold non-empty strings")
        e.asText
      }.to(SortedSet)
    }.getOrElse(SortedSet.empty[String])
    val wm = Option(node.get("wm")).map { f =>
      if (!f.isObject) throw bad("'wm' must map producer names to epoch ms")
      f.properties.asScala.map { e =>
        val v = e.getValue
        if (e.getKey.isEmpty || !v.isIntegralNumber || !v.canConvertToLong) throw bad("'wm' must map producer names to epoch ms")
        e.getKey -> v.longValue
      }.to(SortedMap)
    }.getOrElse(SortedMap.empty[String, Long])

    val state = new ControlState(n, eos, wm)
    if (n == 0 && state.producers > 0) throw bad("producers recorded without 'n'")
    if (state.producers > n) throw bad(s"${state.producers} producers recorded but 'n' is $n")
    state
  }

  def parse(text: String, what: String): ControlState = fromJson(Json.parse(text, what), what)
}
