package streamctl
package system

import java.util.concurrent.{
  CompletableFuture,
  ExecutionException,
  Executor,
  ExecutorService,
  Executors
}

/**
 * Requests to the system sent from a thread of their own, for a planner that wants the answer
 * later: at thousands of partitions, building a request (kafka-clients makes a future and a look-up
 * per partition) or waiting for a description takes tens of milliseconds that the planning thread
 * spends on its own steps instead.
 *
 * {{{
 * val heads = InBackground.ask(InBackground.executor)(admin.upcomingOffsetsAsked(ssps))
 * // ... other planning ...
 * heads() // waits for the request to be sent and answered; Kafka's error, if any, is raised here
 * }}}
 */
private[streamctl] object InBackground {

  /**
   * Daemon threads: a few requests per batch per query, so threads are few and idle ones go. (Tests
   * of the planning run its requests on their own thread instead, in order.)
   */
  lazy val executor: ExecutorService =
    Executors.newCachedThreadPool(DaemonThreads.named("streamctl-admin-requests"))

  /**
   * Runs `send` (which sends a request and returns the wait for its answer) on `on` ([[executor]]);
   * the function returned waits for both, once, and raises what either raised.
   */
  def ask[T](on: Executor)(send: => () => T): () => T = {
    val sent = CompletableFuture.supplyAsync(() => send, on)
    lazy val answer =
      try sent.get()()
      catch { case e: ExecutionException => throw e.getCause }
    () => answer
  }
}
