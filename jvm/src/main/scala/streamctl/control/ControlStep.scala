package streamctl.control

import streamctl.plan.{BatchPlan, PlanningContext, PlanningStep, SourcePosition}

/**
 * In-band control's planning step, the last of the chain (it needs to know whether the batch reads
 * anything): carries the intermediate SSPs' control states into the batch's end offset
 * ([[ControlState]]) and, once Spark committed a batch, deletes the readers' results the offset log
 * now holds. The source's other control duties (real-time batches, each task's start state,
 * metrics) are [[SourceControl]]'s, which makes this step.
 */
final class ControlStep private[control] (source: SourceControl) extends PlanningStep {

  /**
   * The control state of the batch planned so far. A batch that runs gets the next `seq` and starts
   * from the states after the previous batch; when nothing else changed there is no batch, and
   * those states wait in the store.
   */
  override def apply(plan: BatchPlan, ctx: PlanningContext): BatchPlan = {
    val previous = plan.previous
    source.known = Some(previous)
    if (!source.hasIntermediateStreams) {
      val next = plan.end
      source.report(next != previous, source.endedByTarget(next, ctx.availableNowTarget))
      return plan
    }
    val prev = previous.state(ControlState.Codec)
    val unchanged = plan.withState(_.updated(ControlState.Codec, prev))
    val next = unchanged.end
    val after = source.startStates(plan, next)
    val newData = next != previous
    val ended =
      if (source.allEndOfStream(after, next.ssps)) Some(InputsEnded.EndOfStream)
      else source.endedByTarget(next, ctx.availableNowTarget)
    source.report(newData, ended)
    if (newData) plan.withState(_.updated(ControlState.Codec, ControlState(prev.seq + 1, after)))
    else unchanged
  }

  /**
   * Spark committed the batch ending at `end` and logged the next: older results are merged into
   * the log.
   */
  override def committed(end: SourcePosition): Unit =
    if (source.hasIntermediateStreams)
      source.results.deleteBefore(end.state(ControlState.Codec).seq)
}
