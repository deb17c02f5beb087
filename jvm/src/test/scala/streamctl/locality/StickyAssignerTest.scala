package streamctl.locality

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import scala.util.Random

import streamctl.system.TaskName

/** The acceptance cases of issue 7, one scenario each. */
class StickyAssignerTest {
  private def tasks(n: Int): Seq[TaskName] = (0 until n).map(p => TaskName(s"Partition $p"))
  private def executor(i: Int): ExecutorId = ExecutorId(i.toString, s"host-$i")
  private val Seq(e1, e2, e3, e4) = (1 to 4).map(executor)
  private val twelve = tasks(12)
  private val onThree = StickyAssigner.assign(TaskLocality.empty, twelve, Seq(e1, e2, e3)).locality

  private def tasksOn(l: TaskLocality, e: ExecutorId): Set[TaskName] =
    l.placement.collect { case (t, `e`) => t }.toSet

  @Test def startsBalanced(): Unit =
    assertEquals(Map(e1 -> 4, e2 -> 4, e3 -> 4), onThree.loads)

  @Test def losingOneOfThreeMovesExactlyItsFourTasks(): Unit = {
    val next = StickyAssigner.assign(onThree, twelve, Seq(e1, e2))
    assertEquals(4, next.moved.size)
    assertEquals(tasksOn(onThree, e3), next.moved)
    assertEquals(Map(e1 -> 6, e2 -> 6), next.locality.loads)
    (twelve.toSet -- next.moved).foreach(t =>
      assertEquals(onThree.executorOf(t), next.locality.executorOf(t))
    )
  }

  @Test def addingOneToThreeMovesExactlyThree(): Unit = {
    val next = StickyAssigner.assign(onThree, twelve, Seq(e1, e2, e3, e4))
    assertEquals(3, next.moved.size)
    assertEquals(Map(e1 -> 3, e2 -> 3, e3 -> 3, e4 -> 3), next.locality.loads)
    assertEquals(next.moved, tasksOn(next.locality, e4))
    Seq(e1, e2, e3).foreach(e =>
      assertEquals(1, (tasksOn(onThree, e) -- tasksOn(next.locality, e)).size)
    )
  }

  @Test def returningExecutorGetsItsTasksBack(): Unit = {
    val lost = StickyAssigner.assign(onThree, twelve, Seq(e1, e2)).locality
    val back = StickyAssigner.assign(lost, twelve, Seq(e1, e2, e3))
    assertEquals(tasksOn(onThree, e3), back.moved)
    assertEquals(onThree.placement, back.locality.placement)
    assertTrue(back.locality.homes.isEmpty, "homes are forgotten once every task is back")
  }

  @Test def returningExecutorGetsWhatBalanceAllows(): Unit = {
    // While e3 is away, e4 joins and takes e3's 4 tasks (e1 and e2 keep their own). When e3
    // returns, balance (3 each) calls for 3 moves, one off each of e1, e2 and e4; the one off
    // e4 is a task that was e3's, which is as many as balance allows back.
    val lost = StickyAssigner.assign(onThree, twelve, Seq(e1, e2)).locality
    val joined = StickyAssigner.assign(lost, twelve, Seq(e1, e2, e4)).locality
    assertEquals(tasksOn(onThree, e3), tasksOn(joined, e4))
    val back = StickyAssigner.assign(joined, twelve, Seq(e1, e2, e3, e4))
    assertEquals(3, back.moved.size)
    assertEquals(Map(e1 -> 3, e2 -> 3, e3 -> 3, e4 -> 3), back.locality.loads)
    assertEquals(1, (tasksOn(back.locality, e3) intersect tasksOn(onThree, e3)).size)
  }

  @Test def replacementExecutorTakesTheGuestsNotTheSurvivorsOwnTasks(): Unit = {
    // e3 dies, e1 and e2 take its tasks in; a replacement e4 joins (as a cluster manager
    // relaunching the lost executor does). Balance needs 4 moves; they must be the guests.
    val lost = StickyAssigner.assign(onThree, twelve, Seq(e1, e2)).locality
    val replaced = StickyAssigner.assign(lost, twelve, Seq(e1, e2, e4))
    assertEquals(4, replaced.moved.size)
    assertEquals(tasksOn(onThree, e1), tasksOn(replaced.locality, e1))
    assertEquals(tasksOn(onThree, e2), tasksOn(replaced.locality, e2))
    assertEquals(tasksOn(onThree, e3), tasksOn(replaced.locality, e4))
  }

  @Test def afterASecondLossTheReplacementTakesThatLossesTasksNotTheFirstReplacements(): Unit = {
    // e3 lost, e4 takes its tasks in; then e1 lost, its tasks take refuge on e2 and e4, and a
    // replacement e5 joins: the 4 moves balance needs are e1's tasks. e4 keeps e3's, warm there.
    val e5 = executor(5)
    val lost = StickyAssigner.assign(onThree, twelve, Seq(e1, e2)).locality
    val replaced = StickyAssigner.assign(lost, twelve, Seq(e1, e2, e4)).locality
    assertEquals(tasksOn(onThree, e3), replaced.settled, "taken in by the replacement: settled")
    val lostAgain = StickyAssigner.assign(replaced, twelve, Seq(e2, e4)).locality
    val again = StickyAssigner.assign(lostAgain, twelve, Seq(e2, e4, e5))
    assertEquals(tasksOn(onThree, e1), tasksOn(again.locality, e5))
    assertEquals(tasksOn(onThree, e3), tasksOn(again.locality, e4))
    assertEquals(tasksOn(onThree, e1), again.moved)
    // Stored and read back, settled tasks stay settled; e3's still go home when it returns, as
    // far as balance allows (one move off e4, one of the three it has to make).
    assertEquals(again.locality, TaskLocality.fromJson(again.locality.toJson, "mapping"))
    val back = StickyAssigner.assign(again.locality, twelve, Seq(e2, e3, e4, e5)).locality
    assertEquals(1, (tasksOn(back, e3) intersect tasksOn(onThree, e3)).size)
  }

  @Test def sameIdOnAnotherHostIsNotAReturn(): Unit = {
    val lost = StickyAssigner.assign(onThree, twelve, Seq(e1, e2)).locality
    val impostor = ExecutorId(e3.id, "elsewhere")
    val next = StickyAssigner.assign(lost, twelve, Seq(e1, e2, impostor))
    assertEquals(4, next.locality.loads(impostor))
    assertEquals(tasksOn(onThree, e3), next.locality.homes.keySet, "still waiting for the real e3")
  }

  @Test def outputDoesNotDependOnInputOrder(): Unit = {
    val executors = (1 to 5).map(executor)
    // An awkward previous state: unbalanced, one executor gone, some remembered homes.
    val previous = TaskLocality(
      tasks(17).zipWithIndex.map { case (t, i) => t -> executor(1 + (i * i) % 6) }.toMap,
      Map(TaskName("Partition 3") -> e4, TaskName("Partition 8") -> e2)
    )
    val expected = StickyAssigner.assign(previous, tasks(23), executors)
    (1 to 20).foreach { seed =>
      val random = new Random(seed)
      val shuffledPrevious = TaskLocality(
        random.shuffle(previous.placement.toSeq).toMap,
        random.shuffle(previous.homes.toSeq).toMap
      )
      val again = StickyAssigner.assign(
        shuffledPrevious,
        random.shuffle(tasks(23)),
        random.shuffle(executors)
      )
      assertEquals(expected, again)
      assertEquals(expected.locality.toJson, again.locality.toJson)
    }
  }

  @Test def noExecutorsMeansNoPreferredLocationsAndNoError(): Unit = {
    val fresh = StickyAssigner.assign(TaskLocality.empty, twelve, Seq.empty)
    assertEquals(Assignment(TaskLocality.empty, Set.empty), fresh)
    val none = StickyAssigner.assign(onThree, twelve, Seq.empty)
    assertTrue(none.locality.placement.isEmpty)
    assertTrue(none.moved.isEmpty)
    twelve.foreach(t => assertEquals(0, none.locality.preferredLocations(t).length))
    // When the same executors register again, every task goes back where it was.
    assertEquals(
      onThree.placement,
      StickyAssigner.assign(none.locality, twelve, Seq(e1, e2, e3)).locality.placement
    )
  }

  @Test def newTasksArePlacedNotMoved(): Unit = {
    val next = StickyAssigner.assign(onThree, tasks(15), Seq(e1, e2, e3))
    assertTrue(next.moved.isEmpty)
    assertEquals(Map(e1 -> 5, e2 -> 5, e3 -> 5), next.locality.loads)
  }

  @Test def vanishedTasksAreForgotten(): Unit = {
    val lost = StickyAssigner.assign(onThree, twelve, Seq(e1, e2)).locality
    val next = StickyAssigner.assign(lost, tasks(6), Seq(e1, e2))
    assertEquals(tasks(6).toSet, next.locality.placement.keySet)
    assertTrue(next.locality.homes.keySet.subsetOf(tasks(6).toSet))
  }

  @Test def preferredLocationIsTheExecutorLocation(): Unit = {
    val t = twelve.head
    assertArrayEquals(
      Array[AnyRef](onThree.placement(t).location),
      onThree.preferredLocations(t).map(s => s: AnyRef)
    )
  }
}
