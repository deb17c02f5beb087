package streamctl.grouper

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.system.{SSP, TaskName}

/** The three built-in groupers on their own: plain grouping, and `previous` honoured. */
class GroupersTest {
  private val a0 = SSP.kafka("a", 0)
  private val a1 = SSP.kafka("a", 1)
  private val b0 = SSP.kafka("b", 0)
  private val b2 = SSP.kafka("b", 2)
  private val all = Set(a0, a1, b0, b2)

  private def t(name: String) = TaskName(name)
  private def p(n: Int) = GroupByPartition.taskName(n)

  @Test def byPartitionJoinsEqualPartitionNumbers(): Unit =
    assertEquals(
      Map(p(0) -> Set(a0, b0), p(1) -> Set(a1), p(2) -> Set(b2)),
      new GroupByPartition().group(Map.empty, all)
    )

  @Test def bySspMakesOneTaskPerSsp(): Unit = {
    val g = new GroupBySystemStreamPartition().group(Map.empty, all)
    assertEquals(4, g.size)
    assertEquals(Set(b2), g(t("SystemStreamPartition [kafka, b, 2]")))
    assertTrue(g.values.forall(_.size == 1))
  }

  @Test def singlePutsEverythingInTaskZero(): Unit =
    assertEquals(Map(t("Task 0") -> all), new AllSspToSingleTask().group(Map.empty, all))

  @Test def everyGrouperKeepsPreviousTasks(): Unit = {
    val previous = Map(b2 -> p(0), a1 -> t("Elsewhere"))
    for (g <- Seq(new GroupByPartition, new GroupBySystemStreamPartition, new AllSspToSingleTask)) {
      val result = g.group(previous, all)
      assertTrue(result(p(0)).contains(b2), s"${g.getClass.getSimpleName}: $result")
      assertEquals(Set(a1), result(t("Elsewhere")), s"${g.getClass.getSimpleName}: $result")
      assertEquals(all, result.values.flatten.toSet)
    }
  }

  @Test def emptyInputMakesNoTasks(): Unit =
    for (g <- Seq(new GroupByPartition, new GroupBySystemStreamPartition, new AllSspToSingleTask))
      assertEquals(Map.empty, g.group(Map.empty, Set.empty))
}
