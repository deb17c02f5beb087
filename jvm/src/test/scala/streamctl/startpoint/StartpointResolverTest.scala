package streamctl.startpoint

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.StreamctlException
import streamctl.startpoint.Startpoint._
import streamctl.system.{SSP, SystemAdmin, TaskName}

class StartpointResolverTest {
  private val p0 = SSP.kafka("orders", 0)
  private val p1 = SSP.kafka("orders", 1)
  private val empty = SSP.kafka("orders", 2)
  // p0: offsets 100..104 with timestamps 10, 20, 20, 30, 40 (104 is the last, 105 upcoming).
  private def admin = new FakeSystemAdmin()
    .add(p0, 100, Seq(10, 20, 20, 30, 40))
    .add(p1, 0, Seq(5))
    .add(empty, 7, Seq.empty)

  private def resolveOne(sp: Startpoint, ssp: SSP = p0): Resolution =
    new StartpointResolver(admin).resolveOne(ssp, sp)

  private def error(body: => Any): String =
    assertThrows(classOf[StreamctlException], () => { body; () }).getMessage

  @Test def oldestAndUpcomingAreThePartitionEnds(): Unit = {
    assertEquals(100L, resolveOne(Oldest(0)).offset)
    assertEquals(105L, resolveOne(Upcoming(0)).offset)
    assertEquals(7L, resolveOne(Upcoming(0), empty).offset)
  }

  @Test def timestampIsFirstOffsetAtOrAfterIt(): Unit = {
    assertEquals(101L, resolveOne(Timestamp(20, 0)).offset) // first of two equal timestamps
    assertEquals(103L, resolveOne(Timestamp(21, 0)).offset)
    assertEquals(100L, resolveOne(Timestamp(0, 0)).offset)
    assertFalse(resolveOne(Timestamp(40, 0)).beyondData)
  }

  @Test def timestampBeyondTheDataResolvesToTheEndAndSaysSo(): Unit = {
    val r = resolveOne(Timestamp(41, 0))
    assertEquals(105L, r.offset)
    assertTrue(r.beyondData)
    assertTrue(r.describe.contains("end of the partition"), r.describe)
    assertTrue(resolveOne(Timestamp(0, 0), empty).beyondData)
  }

  @Test def specificInRangeIsKeptIncludingBothEnds(): Unit =
    for (o <- Seq(100L, 103L, 105L)) assertEquals(o, resolveOne(Specific(o, 0)).offset)

  @Test def specificBeyondTheEndNamesSspOffsetAndRangeOnOneLine(): Unit = {
    val m = error(resolveOne(Specific(106, 0)))
    assertTrue(
      m.contains("orders-0") && m.contains("106") && m.contains("beyond the end") && m.contains(
        "100 to 105"
      ),
      m
    )
    assertFalse(m.contains("\n"), s"one problem, one line: $m")
  }

  @Test def specificBeforeTheOldestNamesRetention(): Unit = {
    val m = error(resolveOne(Specific(99, 0)))
    assertTrue(
      m.contains("orders-0") && m.contains("99") && m.contains("retention") && m.contains(
        "100 to 105"
      ),
      m
    )
  }

  @Test def allProblemsAreReportedTogether(): Unit = {
    val m = error(new StartpointResolver(admin).resolve(Map(
      p0 -> Specific(1000, 0),
      p1 -> Specific(9, 0),
      SSP.kafka("orders", 5) -> Oldest(0),
      empty -> Custom("txn", "", 0)
    )))
    assertTrue(m.contains("4 startpoints") && m.contains("orders-0") && m.contains("orders-1"), m)
    assertTrue(
      m.contains("Partition 5 of stream 'orders' does not exist") && m.contains("kind 'txn'"),
      m
    )
  }

  @Test def missingPartitionAndStreamAreNamed(): Unit = {
    val m = error(resolveOne(Oldest(0), SSP.kafka("orders", 9)))
    assertTrue(
      m.contains(
        "Partition 9 of stream 'orders' does not exist (a startpoint): it has 3 partitions (0..2)"
      ),
      m
    )
    val s = error(resolveOne(Timestamp(5, 0), SSP.kafka("nope", 0)))
    assertTrue(s.contains("stream 'nope' does not exist"), s)
  }

  @Test def otherSystemIsRefused(): Unit = {
    val m = error(resolveOne(Oldest(0), SSP("kinesis", "orders", 0)))
    assertTrue(m.contains("kinesis"), m)
  }

  @Test def oneAdminCallPerKindWhateverTheNumberOfSsps(): Unit = {
    val a = new FakeSystemAdmin()
    val ssps = (0 until 2000).map(p => SSP.kafka("big", p))
    ssps.foreach(s => a.add(s, 10, Seq(1, 2, 3)))
    val kinds = Vector[Startpoint](Oldest(0), Upcoming(0), Timestamp(2, 0), Specific(11, 0))
    val result = new StartpointResolver(a).resolve(ssps.map(s => s -> kinds(s.partition % 4)).toMap)
    assertEquals(2000, result.size)
    assertEquals(
      Map("oldestOffsets" -> 1, "upcomingOffsets" -> 1, "offsetsForTimestamps" -> 1),
      a.calls.toMap
    )
    assertEquals(11L, result(SSP.kafka("big", 2)).offset)
  }

  @Test def tasksMayAskDifferentTimesOfOneSsp(): Unit = {
    val a = admin
    val result = new StartpointResolver(a).resolveForTasks(Map(
      (p0, TaskName("A")) -> Timestamp(20, 0),
      (p0, TaskName("B")) -> Timestamp(30, 0),
      (p0, TaskName("C")) -> Timestamp(20, 0),
      (p1, TaskName("A")) -> Oldest(0)
    ))
    assertEquals(
      Map(
        (p0, TaskName("A")) -> 101L,
        (p0, TaskName("B")) -> 103L,
        (p0, TaskName("C")) -> 101L,
        (p1, TaskName("A")) -> 0L
      ),
      result.map { case (k, r) => k -> r.offset }
    )
    assertEquals(2, a.calls("offsetsForTimestamps")) // two distinct times on orders-0
  }

  @Test def taskLevelErrorsNameTheTask(): Unit = {
    val m = error(new StartpointResolver(admin).resolveForTasks(Map((
      p0,
      TaskName("Partition 0")
    ) -> Specific(500, 0))))
    assertTrue(m.contains("orders-0 (task 'Partition 0')") && m.contains("500"), m)
  }

  private class MarkResolver(offsets: Map[String, Long]) extends CustomStartpointResolver {
    var calls = 0
    val kind = "mark"
    def resolve(startpoints: Map[SSP, Custom], admin: SystemAdmin): Map[SSP, Long] = {
      calls += 1
      startpoints.collect {
        case (ssp, c) if offsets.contains(c.payload) => ssp -> offsets(c.payload)
      }
    }
  }

  @Test def customStartpointsGoToTheirResolverInBulk(): Unit = {
    val marks = new MarkResolver(Map("m1" -> 102L, "m2" -> 0L))
    val result = new StartpointResolver(
      admin,
      Seq(marks)
    ).resolve(Map(p0 -> Custom("mark", "m1", 0), p1 -> Custom("mark", "m2", 0)))
    assertEquals(Map(p0 -> 102L, p1 -> 0L), result.map { case (k, r) => k -> r.offset })
    assertEquals(1, marks.calls)
  }

  @Test def customWithoutResolverOrOffsetOrInRangeIsAnError(): Unit = {
    val none = error(new StartpointResolver(admin).resolveOne(p0, Custom("txn", "{}", 0)))
    assertTrue(none.contains("kind 'txn'") && none.contains("orders-0"), none)
    val noOffset = error(new StartpointResolver(
      admin,
      Seq(new MarkResolver(Map.empty))
    ).resolveOne(p0, Custom("mark", "x", 0)))
    assertTrue(noOffset.contains("returned no offset"), noOffset)
    val outside = error(new StartpointResolver(
      admin,
      Seq(new MarkResolver(Map("x" -> 5L)))
    ).resolveOne(p0, Custom("mark", "x", 0)))
    assertTrue(outside.contains("5") && outside.contains("100 to 105"), outside)
  }

  @Test def aCustomResolverThatFailsIsNamedWithTheStartpointsItWasResolving(): Unit = {
    val parsing = new CustomStartpointResolver {
      val kind = "from-end"
      def resolve(startpoints: Map[SSP, Custom], admin: SystemAdmin): Map[SSP, Long] =
        startpoints.map { case (ssp, c) => ssp -> (105L - c.payload.toLong) }
    }
    val m = error(new StartpointResolver(
      admin,
      Seq(parsing)
    ).resolveOne(p0, Custom("from-end", "abc", 0)))
    assertTrue(
      m.contains("kind 'from-end'") && m.contains("orders-0") && m.contains("payload 'abc'") &&
        m.contains("NumberFormatException"),
      m
    )
  }

  @Test def duplicateCustomKindsAreRefused(): Unit =
    assertTrue(error(new StartpointResolver(
      admin,
      Seq(new MarkResolver(Map.empty), new MarkResolver(Map.empty))
    )).contains("mark"))

  @Test def nothingToResolveCallsNothing(): Unit = {
    val a = admin
    assertEquals(Map.empty, new StartpointResolver(a).resolve(Map.empty))
    assertTrue(a.calls.isEmpty)
  }
}
