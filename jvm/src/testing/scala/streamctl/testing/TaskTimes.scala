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
 * times.forBatch(3)   // batch 3's task attempts: executorRunTimeMs, executorCpuTimeMs, ... as doubles
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

  /**
   * Per task attempt of the batch, its executor run time (wall) and executor CPU time in ms, packed
   * as big-endian doubles (wall, CPU, wall, CPU, ...): one py4j call brings a whole batch to
   * Python, where a list of pairs took three calls per task attempt (about 20 s a run at 4,096
   * partitions, on the benchmark's clock).
   */
  def forBatch(batchId: Long): Array[Byte] = {
    val found = Option(times.get(java.lang.Long.valueOf(batchId)))
      .map(l => l.synchronized(l.asScala.toVector))
      .getOrElse(Vector.empty)
    val packed = java.nio.ByteBuffer.allocate(found.size * 2 * java.lang.Double.BYTES)
    found.foreach(a => packed.putDouble(a(0)).putDouble(a(1)))
    packed.array()
  }

  def clear(): Unit = { batchOfStage.clear(); times.clear() }
}
