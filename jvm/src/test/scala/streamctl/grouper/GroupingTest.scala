package streamctl.grouper

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test
import streamctl.StreamctlException
import streamctl.grouper.Fixtures._
import streamctl.system.{SSP, TaskName}

/** The Grouping entry point apart from expansion: first run, stream changes, grouper checks. */
class GroupingTest {
  private val counts = Map("orders" -> 3, "users" -> 5, "x.y-z" -> 1)

  @Test def firstRunIsThePlainGrouping(): Unit =
    for (
      (name, grouper) <- Seq(
        "partition" -> new GroupByPartition,
        "ssp" -> new GroupBySystemStreamPartition,
        "single" -> new AllSspToSingleTask
      )
    ) {
      val m = Grouping(config("grouper" -> name)(counts.keys.toSeq: _*), None, counts)
      assertEquals(
        grouper.group(Map.empty, counts.flatMap { case (s, n) => ssps(s, n) }.toSet),
        m.taskSsps,
        name
      )
      assertEquals(counts, m.initialPartitionCounts, name)
      assertEquals(counts, m.partitionCounts, name)
    }

  @Test def emptyPreviousIsTheSameAsNone(): Unit = {
    val c = config()(counts.keys.toSeq: _*)
    assertEquals(Grouping(c, None, counts), Grouping(c, Some(TaskMapping.empty), counts))
  }

  @Test def aMappingCutToTheAssignedPartitionsIsReadBackWithoutAGrowth(): Unit = {
    // What an `assign` query stores: its partitions only, with the stream's initial count.
    val c = config()("orders")
    val full = Grouping(c, None, Map("orders" -> 4))
    val cut =
      TaskMapping(full.initialPartitionCounts, full.taskSsps.filter(_._2.exists(_.partition < 2)))
    val again = Grouping(c, Some(cut), Map("orders" -> 4))
    assertEquals(full, again)
    // After a growth too, the partitions it read keep their tasks.
    val grown = Grouping(c, Some(full), Map("orders" -> 8))
    val cutGrown = TaskMapping(
      grown.initialPartitionCounts,
      grown.taskSsps.filter(_._2.exists(_.partition == 5))
    )
    assertEquals(
      taskOf(grown, "orders", 5),
      taskOf(Grouping(c, Some(cutGrown), Map("orders" -> 8)), "orders", 5)
    )
  }

  @Test def previousMappingWinsOverTheGrouper(): Unit = {
    // A mapping written under grouper=single, read back under grouper=partition: nothing moves.
    val single = Grouping(config("grouper" -> "single")("orders"), None, Map("orders" -> 3))
    val m = Grouping(config()("orders"), Some(single), Map("orders" -> 3))
    assertEquals(single, m)
  }

  @Test def addedStreamIsGroupedPlainlyAndMovesNothing(): Unit = {
    val c = config()("orders", "users")
    val first = Grouping(config()("orders"), None, Map("orders" -> 2))
    val m = Grouping(c, Some(first), Map("orders" -> 2, "users" -> 3))
    for (i <- 0 until 2)
      assertEquals(first.tasksOf(SSP.kafka("orders", i)), m.tasksOf(SSP.kafka("orders", i)))
    assertEquals(p(2), taskOf(m, "users", 2)) // a new stream may create tasks; expansion never does
    assertEquals(Map("orders" -> 2, "users" -> 3), m.initialPartitionCounts)
    assertEquals(ssps("users", 3), m.addedSince(Some(first)))
  }

  @Test def removedStreamIsDroppedWithItsEmptyTasks(): Unit = {
    val both = Grouping(config()("orders", "users"), None, Map("orders" -> 2, "users" -> 3))
    val m = Grouping(config()("orders"), Some(both), Map("orders" -> 2))
    assertEquals(Seq(p(0), p(1)), m.tasks)
    assertEquals(Map("orders" -> 2), m.initialPartitionCounts)
  }

  @Test def missingOrEmptyCountsAreErrors(): Unit = {
    val c = config()("orders", "users")
    val missing =
      assertThrows(classOf[StreamctlException], () => Grouping(c, None, Map("orders" -> 2)))
    assertTrue(missing.getMessage.contains("'users'"), missing.getMessage)
    val zero = assertThrows(
      classOf[StreamctlException],
      () => Grouping(c, None, Map("orders" -> 2, "users" -> 0))
    )
    assertTrue(zero.getMessage.contains("'users' has 0 partitions"), zero.getMessage)
  }

  @Test def userGrouperIsUsed(): Unit = {
    val m = Grouping(
      config("grouper.class" -> classOf[ReversedGrouper].getName)("orders"),
      None,
      Map("orders" -> 2)
    )
    assertEquals(Seq(t("Reversed 0"), t("Reversed 1")), m.tasks)
  }

  @Test def userGrouperThatMovesAnSspIsCaught(): Unit = {
    val first = Grouping(config()("orders"), None, Map("orders" -> 2))
    val c = config("grouper.class" -> classOf[ForgetfulGrouper].getName)("orders")
    // With nothing changed the grouper is not even asked; a new partition makes it regroup.
    assertGrouperError(
      () => Grouping(c, Some(first), Map("orders" -> 4)),
      classOf[ForgetfulGrouper],
      "moved from task 'Partition"
    )
  }

  @Test def aNullSspInAGroupersOutputIsNamed(): Unit = {
    val a0 = SSP.kafka("a", 0)
    val e = assertThrows(
      classOf[StreamctlException],
      () => GrouperOutputCheck("g", Map.empty, Set(a0), Map(TaskName("T") -> Set[SSP](a0, null)))
    )
    assertEquals("Grouper 'g' returned an invalid grouping: task 'T' has a null SSP", e.getMessage)
  }

  @Test def userGrouperThatLosesDuplicatesOrInventsSspsIsCaught(): Unit = {
    assertGrouperError(
      () => group(classOf[DroppingGrouper]),
      classOf[DroppingGrouper],
      "in no task"
    )
    assertGrouperError(
      () => group(classOf[DuplicatingGrouper]),
      classOf[DuplicatingGrouper],
      "is in two tasks"
    )
    assertGrouperError(
      () => group(classOf[InventingGrouper]),
      classOf[InventingGrouper],
      "kafka/ghost/0"
    )
  }

  private def group(cls: Class[_]): TaskMapping =
    Grouping(config("grouper.class" -> cls.getName)("orders"), None, Map("orders" -> 3))

  private def assertGrouperError(run: () => Any, cls: Class[_], fragment: String): Unit = {
    val e = assertThrows(classOf[StreamctlException], () => { run(); () })
    assertTrue(e.getMessage.contains(cls.getName), e.getMessage)
    assertTrue(e.getMessage.contains(fragment), e.getMessage)
  }
}
