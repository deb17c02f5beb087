package streamctl.testing

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd, SparkListenerTaskStart}
import org.apache.spark.sql.SparkSession

import streamctl.system.TransactionalProducers

/**
 * Faults in chosen Spark task attempts, as SQL functions evaluated row by row in the stage that
 * writes (no Python worker batches the rows): the tests of the transactional sink use them to make
 * Spark retry or speculate an attempt at a known moment, without a hook in the product.
 *
 * {{{
 * TaskAttemptFaults.register(spark)
 * df.selectExpr("fail_after_commit(CAST(value AS STRING), 0) AS value")  // partition 0 runs twice
 * df.selectExpr("stall_first_attempt(CAST(value AS STRING), 0, '150', 120000) AS value")
 * df.selectExpr("stall_and_tell(CAST(value AS STRING), '400,1400', '/tmp/stalls', 120000) AS value")
 * }}}
 */
object TaskAttemptFaults {
  // Attempts whose failure is already arranged: the function runs once per row.
  private val armed = ConcurrentHashMap.newKeySet[java.lang.Long]()

  /** Registers the functions below in `spark`'s SQL. */
  def register(spark: SparkSession): Unit = {
    spark.udf.register(
      "fail_after_commit",
      (value: String, partition: Int) => { failAfterCommit(partition); value }
    )
    spark.udf.register(
      "stall_first_attempt",
      (value: String, partition: Int, at: String, ms: Long) => {
        stallFirstAttempt(value, partition, at, ms); value
      }
    )
    spark.udf.register(
      "stall_and_tell",
      (value: String, at: String, dir: String, ms: Long) => {
        stallAndTell(value, at, dir, ms); value
      }
    )
  }

  /**
   * Fails attempt 0 of Spark partition `partition` once it has ended well: a completion listener
   * runs after the writer committed and closed, before the result reaches the driver, so Spark
   * retries an attempt whose transaction is committed. The executor's idle producers are closed
   * first, so the retry starts a producer of its own, as it would on another executor.
   */
  def failAfterCommit(partition: Int): Unit = {
    val c = TaskContext.get()
    if (
      c != null && c.partitionId() == partition && c.attemptNumber() == 0 &&
      armed.add(c.taskAttemptId())
    )
      c.addTaskCompletionListener[Unit] { done =>
        if (!done.isFailed()) {
          TransactionalProducers.clear()
          throw new IllegalStateException(
            s"streamctl.testing: attempt 0 of partition $partition fails after its commit"
          )
        }
      }
  }

  /**
   * Holds attempt 0 of Spark partition `partition` for up to `ms` when it reaches the row `at`,
   * after the rows before it went to the writer: a straggler, which Spark speculates, or a run to
   * kill mid-batch. An interrupt (Spark killing the attempt) ends the wait.
   */
  def stallFirstAttempt(value: String, partition: Int, at: String, ms: Long): Unit = {
    val c = TaskContext.get()
    if (c != null && c.partitionId() == partition && c.attemptNumber() == 0 && value == at)
      Thread.sleep(ms)
  }

  /**
   * Holds attempt 0 of whichever Spark task reaches a row whose value is one of `at`
   * (comma-separated) for up to `ms`, after the rows before it went to the writer, and first writes
   * the id of the executor it runs on to `dir/stalled-<value>`: the moment, and the executor, for a
   * test to kill mid-write. An interrupt ends the wait.
   */
  def stallAndTell(value: String, at: String, dir: String, ms: Long): Unit = {
    val c = TaskContext.get()
    if (c != null && c.attemptNumber() == 0 && at.split(',').contains(value)) {
      // Written aside, then moved in place: a test that sees the file reads the whole id.
      val told = java.nio.file.Paths.get(dir, s"stalled-$value")
      val aside = java.nio.file.Paths.get(dir, s".stalled-$value")
      java.nio.file.Files.writeString(aside, SparkEnv.get.executorId)
      java.nio.file.Files.move(aside, told, java.nio.file.StandardCopyOption.ATOMIC_MOVE)
      Thread.sleep(ms)
    }
  }
}

/**
 * Counts speculative Spark task attempts, started and succeeded, so that a test of speculation can
 * tell that one ran.
 *
 * {{{
 * val s = new SpeculativeAttempts(); spark.sparkContext.addSparkListener(s)
 * // ... run a job ...
 * s.started; s.succeeded
 * }}}
 */
final class SpeculativeAttempts extends SparkListener {
  private val startedCount = new AtomicInteger
  private val succeededCount = new AtomicInteger

  override def onTaskStart(start: SparkListenerTaskStart): Unit =
    if (start.taskInfo.speculative) startedCount.incrementAndGet()

  override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
    if (end.taskInfo.speculative && end.taskInfo.successful) succeededCount.incrementAndGet()

  def started: Int = startedCount.get
  def succeeded: Int = succeededCount.get
}

/**
 * Where each Spark partition of a result stage (a streamctl sink's writer partitions) ran, batch
 * after batch: how often one ran on an executor again after running on another in between, the case
 * where the first executor's pooled transactional producer has been fenced.
 *
 * {{{
 * val p = new WriterPlacements(); spark.sparkContext.addSparkListener(p)
 * // ... run batches ...
 * p.returns // e.g. 3
 * }}}
 */
final class WriterPlacements extends SparkListener {
  private val ran = new java.util.concurrent.ConcurrentLinkedQueue[(Int, String)]()

  override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
    if (end.taskType == "ResultTask" && end.taskInfo.successful)
      ran.add(end.taskInfo.index -> end.taskInfo.executorId)

  def returns: Int = {
    val byPartition = scala.collection.mutable.Map.empty[Int, List[String]]
    ran.forEach { case (p, e) => byPartition(p) = e :: byPartition.getOrElse(p, Nil) }
    byPartition.valuesIterator.map { newestFirst =>
      val executors = newestFirst.reverse
      executors.indices.count(i =>
        i >= 2 && executors(i) != executors(i - 1) && executors.take(i - 1).contains(executors(i))
      )
    }.sum
  }
}
