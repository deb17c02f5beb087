package streamctl.locality

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.metadata.{InMemoryMetadataStore, StoreLayout}
import streamctl.plan.{ReaderReports, ReaderRun}
import streamctl.system.{SSP, SkippedRange, TaskName}

class HostAffinityTest {

  /** The readers' reports, kept in memory (in Spark, an accumulator). */
  private final class Reports extends ReaderReports {
    private var recorded = Vector.empty[ReaderRun]
    def record(run: ReaderRun): Unit = recorded :+= run
    override def runs: Seq[ReaderRun] = recorded
    override def skipped: Seq[SkippedRange] = Nil
    override def recordTimes: Map[SSP, Long] = Map.empty
    override def clear(): Unit = recorded = Vector.empty
  }

  private val tasks = (0 until 12).map(p => TaskName(s"Partition $p"))
  private val Seq(e1, e2, e3) = (1 to 3).map(i => ExecutorId(i.toString, s"host-$i"))

  private class Fixture(enabled: Boolean = true) {
    var puts = 0
    val memory: InMemoryMetadataStore = new InMemoryMetadataStore {
      override def put(namespace: String, key: String, value: String): Unit = {
        puts += 1; super.put(namespace, key, value)
      }
    }
    var live: Seq[ExecutorId] = Seq(e1, e2, e3)
    val runs: Reports = new Reports
    private val store = new TaskLocalityStore(memory, StoreLayout.Source("0").localityKey)
    def step(): HostAffinity = new HostAffinity(enabled, () => live, () => store, runs)
    def stored: Option[String] = memory.get(StoreLayout.LocalityNamespace, "assignment-0")
  }

  @Test def everyTaskPrefersItsAssignedExecutor(): Unit = {
    val f = new Fixture
    val locality = f.step().plan("b1", tasks)
    assertEquals(Map(e1 -> 4, e2 -> 4, e3 -> 4), locality.loads)
    tasks.foreach(t =>
      assertArrayEquals(
        Array[AnyRef](locality.placement(t).location),
        locality.preferredLocations(t).map(x => x: AnyRef)
      )
    )
    assertTrue(f.stored.isDefined)
  }

  @Test def anUnreadableLocalityIsNoPreferenceAndIsReplaced(): Unit = {
    val f = new Fixture
    // Truncated, say: failing here would fail every batch and every restart over a preference.
    f.memory.put(StoreLayout.LocalityNamespace, StoreLayout.Source("0").localityKey, "{")
    val locality = f.step().plan("b1", tasks)
    assertEquals(Map(e1 -> 4, e2 -> 4, e3 -> 4), locality.loads)
    assertEquals(Some(locality.toJson), f.stored)
  }

  @Test def stickyAcrossBatchesAndRestartsAndWritesOnlyChanges(): Unit = {
    val f = new Fixture
    val step = f.step()
    val first = step.plan("b1", tasks)
    assertSame(first, step.plan("b2", tasks), "an unchanged assignment is not worked out again")
    assertEquals(1, f.puts, "an unchanged assignment is not written again")
    f.live = Seq(e1, e2)
    val lost = step.plan("b3", tasks)
    assertEquals(2, f.puts)
    assertEquals("4", step.metrics("tasksMoved"))
    assertEquals("2", step.metrics("executors"))
    // A restarted query (a new step) starts from the stored assignment.
    assertEquals(lost, f.step().plan("b4", tasks))
    step.plan("b4", tasks)
    assertEquals("0", step.metrics("tasksMoved"), "nothing changed since the last batch")
  }

  @Test def driverOnlyMeansNoPreferredLocationsAndNoError(): Unit = {
    val f = new Fixture
    f.live = Seq.empty
    val locality = f.step().plan("b1", tasks)
    tasks.foreach(t => assertEquals(0, locality.preferredLocations(t).length))
  }

  @Test def disabledAssignsNothingAndStoresNothing(): Unit = {
    val f = new Fixture(enabled = false)
    val step = f.step()
    assertTrue(step.plan("b1", tasks).placement.isEmpty)
    assertEquals(None, f.stored)
    assertEquals(Set("consumersCreated", "consumersReused"), step.metrics.keySet)
  }

  @Test def metricsCountConsumersAndTasksRunElsewhere(): Unit = {
    val f = new Fixture
    val step = f.step()
    val locality = step.plan("b1", tasks.take(3))
    def ranOn(t: Int) = locality.placement(tasks(t)).id
    f.runs.record(ReaderRun(TaskName("Partition 0"), ranOn(0), consumerReused = true))
    f.runs.record(ReaderRun(TaskName("Partition 1"), ranOn(1), consumerReused = true))
    f.runs.record(ReaderRun(
      TaskName("Partition 2"),
      ranOn(1),
      consumerReused = false
    )) // not where it was assigned
    assertEquals("2", step.metrics("consumersReused"))
    assertEquals("1", step.metrics("consumersCreated"))
    assertEquals("1", step.metrics("tasksOffAssignedExecutor"))
    step.plan("b1", tasks.take(3)) // planned again for a second action on the same batch
    assertEquals("2", step.metrics("consumersReused"), "a batch planned again keeps its runs")
    step.plan("b2", tasks.take(3))
    assertEquals("0", step.metrics("consumersReused"), "a new batch starts counting afresh")
  }

  @Test def aBatchPlannedAgainKeepsItsMoves(): Unit = {
    val f = new Fixture
    val step = f.step()
    step.plan("b1", tasks)
    f.live = Seq(e1, e2)
    step.plan("b2", tasks)
    step.plan("b2", tasks) // foreachBatch runs a second action: nothing moves now, 4 did for b2
    assertEquals("4", step.metrics("tasksMoved"))
    f.live = Seq(e1)
    step.plan("b2", tasks) // a third action, after another loss: its moves add up
    assertEquals("10", step.metrics("tasksMoved"))
  }
}
