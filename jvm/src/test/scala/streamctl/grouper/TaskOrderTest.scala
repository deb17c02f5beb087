package streamctl.grouper

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.system.TaskName

class TaskOrderTest {
  private def sorted(names: String*): Seq[String] =
    names.map(TaskName(_)).sorted(TaskOrder).map(_.name)

  @Test def digitRunsCompareAsNumbers(): Unit =
    assertEquals(
      Seq("Partition 1", "Partition 02", "Partition 2", "Partition 10", "Task 0"),
      sorted("Partition 10", "Partition 2", "Partition 1", "Task 0", "Partition 02")
    )

  @Test def sspTaskNamesSortByStreamThenPartition(): Unit =
    assertEquals(
      Seq(
        "SystemStreamPartition [kafka, s-9, 100]",
        "SystemStreamPartition [kafka, s-10, 2]",
        "SystemStreamPartition [kafka, s-10, 11]"
      ),
      sorted(
        "SystemStreamPartition [kafka, s-10, 11]",
        "SystemStreamPartition [kafka, s-9, 100]",
        "SystemStreamPartition [kafka, s-10, 2]"
      )
    )

  @Test def longDigitRunsDoNotOverflow(): Unit =
    assertEquals(
      Seq("T 99999999999999999999", "T 100000000000000000000"),
      sorted("T 100000000000000000000", "T 99999999999999999999")
    )

  @Test def prefixSortsFirst(): Unit =
    assertEquals(
      Seq("Partition", "Partition 0", "Partition 0a"),
      sorted("Partition 0a", "Partition", "Partition 0")
    )
}
