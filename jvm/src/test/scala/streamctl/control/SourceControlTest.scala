package streamctl.control

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.metadata.{InMemoryMetadataStore, StoreLayout}
import streamctl.plan.{BatchPlan, PlanningContext, SourcePosition}
import streamctl.system.{SSP, TaskName}

class SourceControlTest {
  private val m0 = SSP.kafka("mid", 0)
  private val m1 = SSP.kafka("mid", 1)
  private val t0 = TaskName("Partition 0")
  private val t1 = TaskName("Partition 1")
  private val store = new InMemoryMetadataStore
  private val results = new ControlResults(store, StoreLayout.Source("0").controlNamespace)

  private def sourceControl() = new SourceControl(
    Set("mid"),
    stopOnEndOfStream = true,
    store,
    StoreLayout.Source("0").controlNamespace,
    None
  )
  private def at(p0: Long, p1: Long) = SourcePosition(Map(t0 -> Map(m0 -> p0), t1 -> Map(m1 -> p1)))

  /**
   * The end of the batch from `previous` to `next` (beginning at `next.starts` where it has them),
   * with control as the chain's last step.
   */
  private def plan(
      control: SourceControl,
      previous: SourcePosition,
      next: SourcePosition,
      skippedAhead: Set[(TaskName, SSP)] = Set.empty
  ): SourcePosition = {
    val begins = next.starts.foldLeft(previous.tasks) { case (b, (t, ps)) =>
      b.updated(t, b.getOrElse(t, Map.empty) ++ ps)
    }
    control.step(
      BatchPlan(
        previous,
        begins,
        previous.state,
        ends = next.tasks.values.flatten.toMap,
        skippedAhead = skippedAhead
      ),
      PlanningContext()
    ).end
  }

  private def state(messages: ControlMessage*): SspControlState =
    messages.foldLeft(SspControlState.empty)((s, m) => s(m, m0, 0).state)

  @Test def batchesNumberThemselvesAndCarryTheMergedResults(): Unit = {
    val control = sourceControl()
    results.put(3, TaskName("stale"), Map(m0 -> state(EndOfStreamMessage("old", 1))))
    val first = control.initialize(at(0, 0))
    assertEquals(Some(ControlState.initial), first.state.get(ControlState.Codec))
    assertTrue(
      results.load(3).isEmpty,
      "a new query forgets results an older query left in its store"
    )

    val b1 = plan(control, first, at(5, 5))
    assertEquals(Some(ControlState(1, Map.empty)), b1.state.get(ControlState.Codec))

    // The readers of batch 1 heard two of two producers on m0 and one on m1.
    val s0 = state(WatermarkMessage("p0", 2, 10), WatermarkMessage("p1", 2, 20))
    val s1 = state(WatermarkMessage("p0", 2, 7))
    results.put(1, TaskName("Partition 0"), Map(m0 -> s0))
    results.put(1, TaskName("Partition 1"), Map(m1 -> s1))
    val metrics = control.metrics(b1)
    assertEquals("false", metrics("endOfStream"))
    assertFalse(metrics.contains("watermark"), "m1 has heard one of two producers")
    assertTrue(metrics(
      "control"
    ).contains(""""mid-0":{"taskCount":2,"producers":2,"endOfStream":0,"idle":0,"watermark":10}"""))

    val b2 = plan(control, b1, at(9, 5))
    assertEquals(Some(ControlState(2, Map(m0 -> s0, m1 -> s1))), b2.state.get(ControlState.Codec))
    control.step.committed(b2)
    assertTrue(results.load(1).isEmpty, "results merged into a logged offset are removed")
  }

  @Test def withoutNewDataThereIsNoBatchAndTheResultsWait(): Unit = {
    val control = sourceControl()
    val b1 = plan(control, control.initialize(at(0, 0)), at(5, 5))
    val eos = state(EndOfStreamMessage("p0", 1))
    results.put(1, TaskName("Partition 0"), Map(m0 -> eos))
    results.put(1, TaskName("Partition 1"), Map(m1 -> eos))
    val again = plan(control, b1, at(5, 5))
    assertEquals(b1.json, again.json, "same positions: no batch, the offset is unchanged")
    assertEquals("true", control.metrics(again)("endOfStream"))
    assertEquals(2, results.load(1).size, "kept until a later offset carries them")
  }

  @Test def aTasksSspWithNothingToReadStillHoldsItsRowsWatermark(): Unit = {
    val control = sourceControl()
    val both = (p0: Long, p1: Long) => SourcePosition(Map(t0 -> Map(m0 -> p0, m1 -> p1)))
    val b1 = plan(control, control.initialize(both(0, 0)), both(5, 5))
    results.put(
      1,
      t0,
      Map(m0 -> state(WatermarkMessage("p0", 1, 10)), m1 -> state(WatermarkMessage("p0", 1, 7)))
    )
    // Batch 2 reads m0 only (m1 held back after an expansion, or given nothing by the budget).
    val b2 = plan(control, b1, both(9, 5))
    val reader =
      TaskControlReader(
        t0,
        Seq(streamctl.system.SspRange(m0, 5, 9)),
        control.forTask(b2, t0),
        Set("mid")
      ).get
    reader.decoderFor(m0).accept(new streamctl.system.Envelope(
      m0,
      5,
      -1L,
      null,
      IntermediateMessage.watermark("p0", 1, 200)
    ))
    assertEquals(200L, reader.state(m0).watermark.get)
    assertEquals(7L, reader.watermarkMs(m0), "m1's records, still to come, may be as old as 7")
  }

  @Test def anSspWhoseBeginningMovedStartsOver(): Unit = {
    val control = sourceControl()
    val b1 = plan(control, control.initialize(at(0, 0)), at(5, 5))
    val eos = state(EndOfStreamMessage("p0", 1))
    results.put(1, TaskName("Partition 0"), Map(m0 -> eos))
    results.put(1, TaskName("Partition 1"), Map(m1 -> eos))
    val rewound = at(9, 9).copy(starts = Map(t0 -> Map(m0 -> 0L)))
    assertEquals(
      Map(m1 -> eos),
      plan(control, b1, rewound).state.get(ControlState.Codec).get.states
    )
  }

  @Test def anSspThatSkippedARetentionGapKeepsWhatItHeard(): Unit = {
    val control = sourceControl()
    val b1 = plan(control, control.initialize(at(0, 0)), at(5, 5))
    val eos = state(EndOfStreamMessage("p0", 2))
    results.put(1, TaskName("Partition 0"), Map(m0 -> eos))
    // Records 5..8 of m0 are gone: the batch begins at 9 and reads on, p0 still ended.
    val skipped = at(12, 9).copy(starts = Map(t0 -> Map(m0 -> 9L)))
    assertEquals(
      Map(m0 -> eos),
      plan(control, b1, skipped, Set(t0 -> m0)).state.get(ControlState.Codec).get.states
    )
  }
}
