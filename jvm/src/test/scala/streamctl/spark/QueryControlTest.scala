package streamctl.spark

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

/**
 * The registry of runs' controls; what a run's control decides is tested in
 * `control.RunControlTest`.
 */
class QueryControlTest {
  @Test def anEndRequestedBeforeTheRunHasItsControlIsTakenUpWhenItIsCreated(): Unit = {
    val id = java.util.UUID.randomUUID().toString
    QueryControlRegistry.requestEnd(id, "run-1")
    val (c, created) = QueryControlRegistry.forThread(id, Some("run-1"), None)
    try {
      assertTrue(created)
      assertTrue(c.run.endRequested, "the request made before the control existed applies to it")
      assertSame(
        c,
        QueryControlRegistry.forThread(id, Some("run-1"), None)._1,
        "one control per run and thread"
      )
    } finally QueryControlRegistry.forget(c)
  }

  @Test def anEndRequestForOneRunDoesNotEndTheNext(): Unit = {
    val id = java.util.UUID.randomUUID().toString
    QueryControlRegistry.requestEnd(id, "run-1")
    var next: QueryControl = null
    val t = new Thread(() => next = QueryControlRegistry.forThread(id, Some("run-2"), None)._1)
    t.start()
    t.join()
    try {
      assertFalse(next.run.endRequested, "the request was for run 1")
      QueryControlRegistry.requestEnd(id, "run-2")
      assertTrue(next.run.endRequested, "an existing control of the run takes the request at once")
    } finally QueryControlRegistry.forget(next)
  }
}
