package streamctl.bench

import java.time.Duration
import java.util.concurrent.{Callable, Executors}

import scala.jdk.CollectionConverters._

import org.apache.kafka.clients.consumer.KafkaConsumer
import org.apache.kafka.common.TopicPartition

import streamctl.system.KafkaParams

/**
 * The ceiling for read throughput: a bare KafkaConsumer poll loop over a whole topic, with the
 * consumer settings a streamctl reader gets by default, on as many threads as the Spark
 * benchmarks have cores (partition p goes to thread p mod threads). Each record's key and
 * value are touched so the loop does at least what a reader must. The topic is read once to
 * warm the JIT and the broker's page cache, then once timed; the last line is machine-readable.
 *
 * {{{
 * RawConsumerBench.main(Array("127.0.0.1:9092", "bench-read-5000000", "5000000", "2"))
 * // RESULT records=5000000 seconds=1.234
 * }}}
 */
object RawConsumerBench {
  def main(args: Array[String]): Unit = {
    if (args.length != 4) {
      System.err.println("usage: RawConsumerBench <bootstrap servers> <topic> <expected records> <threads>")
      sys.exit(2)
    }
    val Array(servers, topic, expectedText, threadsText) = args
    val expected = expectedText.toLong
    val threads = threadsText.toInt
    val params = KafkaParams(Map("bootstrap.servers" -> servers))
    val pool = Executors.newFixedThreadPool(threads)
    try {
      readAll(params, topic, threads, pool) // warm-up
      val started = System.nanoTime()
      val records = readAll(params, topic, threads, pool)
      val seconds = (System.nanoTime() - started) / 1e9
      if (records != expected) throw new IllegalStateException(s"read $records records of '$topic', expected $expected")
      println(f"RESULT records=$records seconds=$seconds%.3f")
    } finally pool.shutdownNow()
  }

  private def readAll(params: KafkaParams, topic: String, threads: Int, pool: java.util.concurrent.ExecutorService): Long = {
    val partitions = {
      val c = new KafkaConsumer[Array[Byte], Array[Byte]](params.consumer)
      try c.partitionsFor(topic).asScala.map(_.partition).sorted.toSeq finally c.close()
    }
    val tasks = (0 until threads).map { t =>
      val mine = partitions.filter(_ % threads == t).map(new TopicPartition(topic, _))
      pool.submit(new Callable[Long] { def call(): Long = readPartitions(params, mine) })
    }
    tasks.map(_.get()).sum
  }

  private def readPartitions(params: KafkaParams, tps: Seq[TopicPartition]): Long = {
    if (tps.isEmpty) return 0L
    val c = new KafkaConsumer[Array[Byte], Array[Byte]](params.consumer)
    try {
      c.assign(tps.asJava)
      c.seekToBeginning(tps.asJava)
      val ends = c.endOffsets(tps.asJava).asScala.map { case (tp, o) => tp -> o.longValue }
      var records = 0L
      var bytes = 0L
      def behind = ends.exists { case (tp, end) => c.position(tp) < end }
      while (behind) {
        val it = c.poll(Duration.ofMillis(500)).iterator()
        while (it.hasNext) {
          val r = it.next()
          val k = r.key()
          bytes += r.value().length + (if (k == null) 0 else k.length)
          records += 1
        }
      }
      if (bytes < 0) println(bytes) // keeps the byte count live for the JIT
      records
    } finally c.close()
  }
}
