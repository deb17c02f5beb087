package streamctl.bench

import org.apache.kafka.common.TopicPartition
import streamctl.locality.{ExecutorId, StickyAssigner, TaskLocality}
import streamctl.system.TaskName

/**
 * How many tasks change executor when one executor is lost or added: streamctl's sticky
 * assigner against the placement of Spark's built-in Kafka source. A simulation over the same
 * executor lists (no Spark, no broker), so it measures placement only, not throughput.
 *
 * Spark's Kafka source sorts the executors it knows by host, then executor id, both descending
 * as strings, and prefers for each partition the executor at `floorMod(topicPartition.hashCode,
 * executorCount)` in that list. Kafka's own `TopicPartition` is used here so the hash is the
 * real one.
 *
 * {{{
 * HostAffinityBench.main(Array.empty)   // prints the table
 * }}}
 */
object HostAffinityBench {
  private val Topic = "orders"
  private val TaskCount = 200
  private val tasks = (0 until TaskCount).map(p => TaskName(s"Partition $p"))

  // Two executors per host, numbered from 1 as on YARN, so the host-then-id sort matters.
  private def executor(i: Int): ExecutorId = ExecutorId(i.toString, s"10.0.0.${(i + 1) / 2}")

  private def hashPlacement(executors: Seq[ExecutorId]): Map[TaskName, ExecutorId] = {
    val sorted = executors.sorted(Ordering.by((e: ExecutorId) => (e.host, e.id)).reverse)
    (0 until TaskCount).map { p =>
      tasks(p) -> sorted(Math.floorMod(new TopicPartition(Topic, p).hashCode, sorted.size))
    }.toMap
  }

  private def hashMoves(before: Seq[ExecutorId], after: Seq[ExecutorId]): Int = {
    val (b, a) = (hashPlacement(before), hashPlacement(after))
    tasks.count(t => b(t) != a(t))
  }

  private def stickyMoves(before: Seq[ExecutorId], after: Seq[ExecutorId]): Int = {
    val steady = StickyAssigner.assign(TaskLocality.empty, tasks, before).locality
    StickyAssigner.assign(steady, tasks, after).moved.size
  }

  def main(args: Array[String]): Unit = {
    println(s"Host affinity SIMULATION: $TaskCount tasks (topic '$Topic', partitions 0-${TaskCount - 1}), " +
      "executors on 2 per host; no Spark or Kafka is run.")
    println("Tasks moved = tasks whose preferred executor changes. 'lose 1' is the worst case over which executor is lost.")
    println("hash = Spark's Kafka source: sorted executors (host, id descending), floorMod(TopicPartition.hashCode, n).")
    println()
    val header = f"${"executors"}%9s | ${"event"}%-12s | ${"moved (streamctl)"}%17s | ${"moved (hash)"}%12s | ${"ceil(tasks/executors)"}%21s"
    println(header)
    println("-" * header.length)
    (2 to 10).foreach { n =>
      val executors = (1 to n).map(executor)
      val ceil = (TaskCount + n - 1) / n
      val losses = executors.map(lost => executors.filterNot(_ == lost))
      val lossSticky = losses.map(stickyMoves(executors, _)).max
      val lossHash = losses.map(hashMoves(executors, _)).max
      val grown = executors :+ executor(n + 1)
      println(f"$n%9d | ${s"lose 1 -> ${n - 1}"}%-12s | $lossSticky%17d | $lossHash%12d | $ceil%21d")
      if (n == 4) Summary("host affinity", s"tasks moved of $TaskCount when 1 of 4 executors is lost",
        s"$lossSticky (Spark's hash placement: $lossHash)", s"<= ceil(tasks/executors) = $ceil")
      println(f"$n%9d | ${s"gain 1 -> ${n + 1}"}%-12s | ${stickyMoves(executors, grown)}%17d | ${hashMoves(executors, grown)}%12d | $ceil%21d")
    }
  }
}
