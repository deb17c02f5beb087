package streamctl.bench

import org.apache.kafka.common.TopicPartition

import streamctl.system.{ConsumerPool, KafkaParams, SSP, TaskName}

/**
 * Times the executor's consumer pool as a steady-state batch of P tasks uses it, with the P
 * consumers of the batch before idle in it (issue 28: one reader per partition, 4,096 on one
 * executor): one `acquire` and one `release` per task. No broker: the consumers are assigned but
 * never connect. Prints figures only; it asserts nothing.
 *
 * {{{
 * ConsumerPoolBench.main(Array())        // 1,024 and 4,096 tasks
 * ConsumerPoolBench.main(Array("8192"))
 * }}}
 */
object ConsumerPoolBench {
  def main(args: Array[String]): Unit = {
    val sizes = if (args.isEmpty) Seq(1024, 4096) else args.toSeq.map(_.toInt)
    val params = KafkaParams(Map(
      "bootstrap.servers" -> "127.0.0.1:1",
      "client.id" -> "consumer-pool-bench",
      "fetch.max.wait.ms" -> "10",
      "max.poll.records" -> "10000"
    ))
    sizes.foreach { n =>
      ConsumerPool.clear()
      def batch(): Unit = (0 until n).foreach { i =>
        val task = TaskName.ofPartition(i)
        val lease = ConsumerPool.acquire(params, "bench", task, Seq(SSP.kafka("orders", i)))
        if (!lease.reused) lease.consumer.assign(java.util.Collections.singletonList(new TopicPartition("orders", i)))
        ConsumerPool.release(params, "bench", task, lease.consumer)
      }
      batch() // the first batch creates every task's consumer
      val times = (0 until 7).map { _ =>
        val t0 = System.nanoTime()
        batch()
        (System.nanoTime() - t0) / 1e6
      }.drop(2) // JIT warm-up
      val median = times.sorted.apply(times.size / 2)
      println(f"tasks=$n%,d  pool acquire + release per batch: median $median%.1f ms (${median * 1000 / n}%.1f us a task)")
      Summary("consumer pool", f"acquire + release for $n%,d tasks, $n%,d consumers idle", f"$median%.1f ms")
      ConsumerPool.clear()
    }
  }
}
