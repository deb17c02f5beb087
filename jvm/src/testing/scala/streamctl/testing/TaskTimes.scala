package streamctl.testing

import scala.jdk.CollectionConverters._

import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart, SparkListenerTaskEnd}

/**
 * Wall and CPU time of every Spark task attempt, by the streaming batch whose job ran it: the scale
 * benchmark compares them to find time a reader spends waiting rather than working. Spark puts a
 * micro-batch's id into its jobs' properties (`streaming.sql.batchId`), which is how a stage is
 * traced to its batch.
 *
 * {{{
 * val times = new TaskTimes(); spark.sparkContext.addSparkListener(times)
 * // ... run a query ...
 * times.forBatch(3)   // [[executorRunTimeMs, executorCpuTimeMs], ...] of batch 3's task attempts
 * }}}
 */
final class TaskTimes extends SparkListener {
  private val batchOfStage = new java.util.concurrent.ConcurrentHashMap[Integer, java.lang.Long]()
  private val times =
    new java.util.concurrent.ConcurrentHashMap[java.lang.Long, java.util.List[Array[Double]]]()

  override def onJobStart(job: SparkListenerJobStart): Unit =
    Option(job.properties).flatMap(p => Option(p.getProperty("streaming.sql.batchId"))).foreach {
      id =>
        job.stageIds.foreach(s => batchOfStage.put(s, java.lang.Long.valueOf(id.toLong)))
    }

  override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
    Option(batchOfStage.get(end.stageId)).foreach { batch =>
      val m = end.taskMetrics
      if (m != null) times.computeIfAbsent(
        batch,
        _ => java.util.Collections.synchronizedList(new java.util.ArrayList())
      )
        .add(Array(m.executorRunTime.toDouble, m.executorCpuTime / 1e6))
    }

  /** Per task attempt of the batch: executor run time (wall) and executor CPU time, both in ms. */
  def forBatch(batchId: Long): java.util.List[java.util.List[Double]] =
    Option(times.get(java.lang.Long.valueOf(batchId))).map(_.asScala.map(a =>
      a.toSeq.asJava
    ).asJava)
      .getOrElse(java.util.List.of())

  def clear(): Unit = { batchOfStage.clear(); times.clear() }
}
