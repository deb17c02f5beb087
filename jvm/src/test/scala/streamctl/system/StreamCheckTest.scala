package streamctl.system

import java.util.concurrent.atomic.AtomicInteger

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import streamctl.Eventually.eventually
import streamctl.StreamctlException
import streamctl.startpoint.FakeSystemAdmin

class StreamCheckTest {
  private val admin = new FakeSystemAdmin
  private var clock = 0L
  admin.add(SSP.kafka("orders", 0), 0, Nil)
  admin.ids("orders") = "id-1"

  @Test def asksTheFirstTimeThenAtMostEveryInterval(): Unit = {
    val check =
      new StreamCheck(admin, Subscription.Topics(Seq("orders")), intervalMs = 1000, () => clock)
    assertEquals(Some(Map("orders" -> StreamDescription(1, Some("id-1")))), check.ifDue())
    clock += 999
    assertEquals(None, check.ifDue())
    clock += 1
    assertTrue(check.ifDue().isDefined)
    clock += 500
    check.now() // asking at once restarts the interval
    clock += 600
    assertEquals(None, check.ifDue())
    assertEquals(3, admin.calls("partitionCounts"))
  }

  @Test def aCheckAskedAheadAnswersTheNextBoundary(): Unit = {
    // Asked on a background thread: the fake counts and answers thread-safely.
    val asked = new AtomicInteger
    val partitions = new AtomicInteger(1)
    val check = new StreamCheck(
      new FakeSystemAdmin {
        override def describeStreams(streams: Set[String]): Map[String, StreamDescription] = {
          val n = partitions.get()
          asked.incrementAndGet()
          Map("orders" -> StreamDescription(n, None))
        }
      },
      Subscription.Topics(Seq("orders")),
      intervalMs = 1000,
      () => clock
    )
    check.ifDue()
    check.askAhead()
    assertEquals(1, asked.get(), "not due: nothing asked ahead")
    clock += 1000
    check.askAhead()
    eventually("the question asked ahead answered")(asked.get() >= 2)
    partitions.set(2) // grows after the answer
    clock += 300
    assertEquals(
      Some(Map("orders" -> StreamDescription(1, None))),
      check.ifDue(),
      "the answer asked ahead"
    )
    assertEquals(2, asked.get())
    clock += 699
    assertEquals(None, check.ifDue(), "the interval counts from the ask ahead")
    clock += 1
    assertEquals(2, check.ifDue().get("orders").partitions, "growth is seen at the next check")
  }

  @Test def aCheckAskedAheadThatFailedFailsTheBoundaryWithItsError(): Unit = {
    var down = true
    val check = new StreamCheck(
      new FakeSystemAdmin {
        override def describeStreams(streams: Set[String]): Map[String, StreamDescription] =
          if (down) throw StreamctlException("broker down")
          else Map("orders" -> StreamDescription(1, None))
      },
      Subscription.Topics(Seq("orders")),
      1000,
      () => clock
    )
    check.askAhead()
    val e = assertThrows(classOf[StreamctlException], () => { check.ifDue(); () })
    assertEquals("broker down", e.getMessage)
    down = false
    check.askAhead()
    assertEquals(1, check.ifDue().get("orders").partitions)
  }

  @Test def aMissingStreamIsNamedWithItsOption(): Unit = {
    val check = new StreamCheck(
      new FakeSystemAdmin {
        override def describeStreams(streams: Set[String]): Map[String, StreamDescription] =
          Map.empty
      },
      Subscription.Topics(Seq("orders")),
      1000,
      () => clock
    )
    val e = assertThrows(classOf[StreamctlException], () => { check.now(); () })
    assertEquals("Stream 'orders' does not exist on Kafka (option 'subscribe')", e.getMessage)
  }

  @Test def aMatchingTopicDeletedBeforeItIsDescribedIsLeftOut(): Unit = {
    admin.add(SSP.kafka("orders-b", 0), 0, Nil)
    admin.afterListing = () => { admin.delete("orders-b"); admin.afterListing = () => () }
    val check = new StreamCheck(admin, Subscription.Matching("^orders"), 1000, () => clock)
    assertEquals(Map("orders" -> StreamDescription(1, Some("id-1"))), check.now())
  }

  @Test def anAssignedPartitionMustExist(): Unit = {
    admin.add(SSP.kafka("orders", 1), 0, Nil)
    val ok = new StreamCheck(admin, Subscription.Assign(Map("orders" -> Seq(1))), 1000, () => clock)
    assertEquals(2, ok.now()("orders").partitions)
    val e = assertThrows(
      classOf[StreamctlException],
      () => {
        new StreamCheck(
          admin,
          Subscription.Assign(Map("orders" -> Seq(0, 2, 5))),
          1000,
          () => clock
        ).now();
        ()
      }
    )
    assertEquals(
      "Partition 2 of stream 'orders' does not exist (option 'assign'): it has 2 partitions (0..1)",
      e.getMessage
    )
  }
}
