package streamctl.system

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.Eventually.{eventually, threadAlive}

class GroupOffsetCommitterTest {
  private val p0 = SSP.kafka("orders", 0)
  private val p1 = SSP.kafka("orders", 1)
  private val p2 = SSP.kafka("orders", 2)

  @Test def aReportMovesOnlyThePartitionsPastTheLastBatchEnd(): Unit = {
    val end = Map(p0 -> 10L, p1 -> 20L)
    // p0 read on, p1 reported late from the batch that ended at 20, p2 new since that batch.
    assertEquals(
      Map(p0 -> 12L, p2 -> 3L),
      GroupOffsetCommitter.ahead(Map(p0 -> 12L, p1 -> 18L, p2 -> 3L), end)
    )
    assertEquals(Map.empty, GroupOffsetCommitter.ahead(Map(p0 -> 10L), end))
  }

  @Test def aReportNeverWinsOverALaterBatchEndWhicheverCameFirst(): Unit = {
    // The committer's thread sent batch end 10; then, on two threads, readers report 15 (measured
    // while the end was 10) and the last batch ends at 20.
    val (_, sent) = GroupOffsetCommitter.Waiting().batchEnded(Map(p0 -> 10L)).taken
    val end = Map(p0 -> 20L)
    def sends(w: GroupOffsetCommitter.Waiting) = w.taken._1.map(_._2)
    assertEquals(Some(end), sends(sent.reported(Map(p0 -> 15L)).batchEnded(end)))
    assertEquals(Some(end), sends(sent.batchEnded(end).reported(Map(p0 -> 15L))))
    // The batch end already on its way, the late report sends nothing after it.
    val (_, endSent) = sent.batchEnded(end).taken
    assertEquals(None, sends(endSent.reported(Map(p0 -> 15L))))
    // A report past the end still goes, numbered after it.
    val further = endSent.reported(Map(p0 -> 25L, p1 -> 3L))
    assertEquals(Some(Map(p0 -> 25L, p1 -> 3L)), sends(further))
    assertTrue(further.call > sent.batchEnded(end).call)
  }

  /**
   * A committer whose first commit is under way to a broker that does not answer (nothing listens
   * there: the commit waits out `apiTimeoutMs` with its admin client open), and that client's id.
   */
  private def commitUnderWay(name: String, apiTimeoutMs: Int): (GroupOffsetCommitter, String) = {
    val clientId = s"committer-$name-${System.nanoTime}"
    val params = KafkaParams(Map(
      "bootstrap.servers" -> "127.0.0.1:1",
      "client.id" -> clientId,
      "default.api.timeout.ms" -> apiTimeoutMs.toString
    ))
    val committer = new GroupOffsetCommitter(params, "monitoring", "the test query")
    committer.committed(Map(p0 -> 1L))
    eventually("the commit opened an admin client")(threadAlive(_.contains(clientId)))
    (committer, clientId)
  }

  @Test def closingOnAnInterruptedThreadStillClosesTheAdminClientAndKeepsTheInterrupt(): Unit = {
    val (committer, clientId) = commitUnderWay("close", apiTimeoutMs = 300)
    Thread.currentThread().interrupt() // Spark stopping the query thread
    val thrown =
      try { committer.close(); None }
      catch { case e: InterruptedException => Some(e) }
    val interrupted = Thread.interrupted() // cleared here, for the tests after this one
    assertEquals(None, thrown, "close threw, skipping the admin client")
    assertTrue(interrupted, "the interrupt must stay set for the caller")
    eventually("the admin client closed")(!threadAlive(_.contains(clientId)))
  }

  @Test def closingDoesNotWaitForACommitTheBrokerDoesNotAnswer(): Unit = {
    val (committer, clientId) = commitUnderWay("slow", apiTimeoutMs = 4000)
    Thread.currentThread().interrupt() // skips close's own bounded wait: only the commit could hold it
    val started = System.nanoTime()
    try committer.close()
    finally Thread.interrupted()
    val tookMs = (System.nanoTime() - started) / 1000000
    assertTrue(tookMs < 2000, s"close waited $tookMs ms for the commit under way")
    // The commit closes the client itself once the broker's silence timed it out.
    eventually("the admin client closed")(!threadAlive(_.contains(clientId)))
  }
}
