package streamctl.bench

import java.io.{BufferedReader, InputStreamReader}
import java.time.Duration
import java.util.concurrent.{Callable, ConcurrentLinkedQueue, Executors}
import java.util.zip.CRC32

import scala.jdk.CollectionConverters._

import org.apache.kafka.clients.consumer.KafkaConsumer
import org.apache.kafka.common.TopicPartition

import streamctl.system.KafkaParams

/**
 * The read ceiling: what plain KafkaConsumers do on the same cores as the Spark benchmarks, with
 * the same consumer settings. One consumer per partition, created, assigned and positioned
 * before the clock starts (as a pooled reader's are); `threads` threads (= Spark's cores) drain
 * them one partition at a time, as Spark's task slots drain one input partition at a time.
 * Every byte is read: each record's key and value go through a CRC32, and the result is the
 * payload query's (count, key and value lengths, sum of crc32(value), max offset, max
 * timestamp), so bench/read_throughput.py checks it equals what both Spark sources computed.
 *
 * It runs as a server of bench/read_throughput.py: one read of the whole topic per `run` line on
 * stdin, so the caller interleaves it with the Spark variants (warm-up included).
 *
 * {{{
 * // stdin "run" -> stdout "RESULT seconds=1.234 count=5000000 key_bytes=... value_bytes=... value_crc=... key_crc=... max_offset=... max_timestamp=..."
 * CeilingBench.main(Array("127.0.0.1:9092", "bench-read", "2", "max.poll.records=10000"))
 * }}}
 */
object CeilingBench {
  final class Totals {
    var count, keyBytes, valueBytes, valueCrc, keyCrc = 0L
    var maxOffset, maxTimestamp = Long.MinValue
    def add(o: Totals): Unit = {
      count += o.count; keyBytes += o.keyBytes; valueBytes += o.valueBytes; valueCrc += o.valueCrc; keyCrc += o.keyCrc
      maxOffset = math.max(maxOffset, o.maxOffset); maxTimestamp = math.max(maxTimestamp, o.maxTimestamp)
    }
  }

  def main(args: Array[String]): Unit = {
    if (args.length < 3) {
      System.err.println("usage: CeilingBench <bootstrap servers> <topic> <threads> [consumer setting=value ...]")
      sys.exit(2)
    }
    val Array(servers, topic, threadsText) = args.take(3)
    val settings = args.drop(3).map { kv => val i = kv.indexOf('='); kv.take(i) -> kv.drop(i + 1) }.toMap
    val params = KafkaParams(settings + ("bootstrap.servers" -> servers))
    val pool = Executors.newFixedThreadPool(threadsText.toInt)
    val in = new BufferedReader(new InputStreamReader(System.in))
    try {
      Iterator.continually(in.readLine()).takeWhile(line => line != null && line.trim != "quit").foreach { _ =>
        val t = readOnce(params, topic, pool, threadsText.toInt)
        println(s"RESULT seconds=${t._1} count=${t._2.count} key_bytes=${t._2.keyBytes} value_bytes=${t._2.valueBytes} " +
          s"value_crc=${t._2.valueCrc} key_crc=${t._2.keyCrc} max_offset=${t._2.maxOffset} max_timestamp=${t._2.maxTimestamp}")
        System.out.flush()
      }
    } finally pool.shutdownNow()
  }

  private final case class Reader(consumer: KafkaConsumer[Array[Byte], Array[Byte]], tp: TopicPartition, end: Long)

  private def readOnce(params: KafkaParams, topic: String, pool: java.util.concurrent.ExecutorService,
                       threads: Int): (Double, Totals) = {
    val partitions = {
      val c = new KafkaConsumer[Array[Byte], Array[Byte]](params.consumer)
      try c.partitionsFor(topic).asScala.map(p => new TopicPartition(topic, p.partition)).sortBy(_.partition).toSeq
      finally c.close()
    }
    // Outside the clock: creating, assigning and positioning every consumer, and its first
    // connection to the broker (the end-offset lookup).
    val readers = partitions.map { tp =>
      val c = new KafkaConsumer[Array[Byte], Array[Byte]](params.consumer)
      c.assign(java.util.Collections.singletonList(tp))
      c.seekToBeginning(java.util.Collections.singletonList(tp))
      Reader(c, tp, c.endOffsets(java.util.Collections.singletonList(tp)).get(tp).longValue)
    }
    try {
      val queue = new ConcurrentLinkedQueue[Reader](readers.asJava)
      val started = System.nanoTime()
      val slots = (0 until threads).map { _ =>
        pool.submit(new Callable[Totals] {
          def call(): Totals = {
            val t = new Totals
            var r = queue.poll()
            while (r != null) { drain(r, t); r = queue.poll() }
            t
          }
        })
      }
      val total = new Totals
      slots.foreach(s => total.add(s.get()))
      ((System.nanoTime() - started) / 1e9, total)
    } finally readers.foreach(_.consumer.close())
  }

  private def drain(r: Reader, t: Totals): Unit = {
    val crc = new CRC32
    while (r.consumer.position(r.tp) < r.end) {
      val it = r.consumer.poll(Duration.ofMillis(500)).iterator()
      while (it.hasNext) {
        val rec = it.next()
        val v = rec.value()
        val k = rec.key()
        if (v != null) { crc.reset(); crc.update(v); t.valueCrc += crc.getValue; t.valueBytes += v.length }
        if (k != null) { crc.reset(); crc.update(k); t.keyCrc += crc.getValue; t.keyBytes += k.length }
        t.count += 1
        if (rec.offset > t.maxOffset) t.maxOffset = rec.offset
        if (rec.timestamp > t.maxTimestamp) t.maxTimestamp = rec.timestamp
      }
    }
  }
}
