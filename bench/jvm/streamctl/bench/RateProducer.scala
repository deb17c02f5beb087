package streamctl.bench

import org.apache.kafka.clients.producer.{Callback, KafkaProducer, ProducerRecord, RecordMetadata}

import streamctl.system.KafkaParams

/**
 * The fixed-rate input of the end-to-end latency benchmark (bench/pipeline.py): writes `rate`
 * records a second to a topic for `seconds`, round-robin over its partitions, in a JVM of its
 * own so the rate does not depend on the Spark JVM it feeds. Each record's key is
 * `<wall ms just before the send>:<sequence>`, so the reader can compute its latency; values are
 * `value bytes` letters. It sends every 10 ms what is due by then, flushes, and prints how many
 * records it wrote and the rate achieved; it fails if any send failed.
 *
 * {{{
 * RateProducer.main(Array("127.0.0.1:9092", "bench-e2e-in-0", "8", "5000", "35", "100"))
 * // PRODUCED records=175000 started_ms=1795400000000 seconds=35.001 rate=4999.9
 * }}}
 */
object RateProducer {
  def main(args: Array[String]): Unit = {
    if (args.length != 6) {
      System.err.println("usage: RateProducer <bootstrap servers> <topic> <partitions> <records/s> <seconds> <value bytes>")
      sys.exit(2)
    }
    val Array(servers, topic, partitionsText, rateText, secondsText, sizeText) = args
    val partitions = partitionsText.toInt
    val rate = rateText.toDouble
    val value = Array.tabulate[Byte](sizeText.toInt)(i => ('a' + i % 26).toByte)
    val producer = new KafkaProducer[Array[Byte], Array[Byte]](KafkaParams(Map("bootstrap.servers" -> servers)).producer)
    val failed = new java.util.concurrent.atomic.AtomicLong
    val onSent = new Callback {
      def onCompletion(m: RecordMetadata, e: Exception): Unit = if (e != null) failed.incrementAndGet()
    }
    val startedMs = System.currentTimeMillis()
    val started = System.nanoTime()
    val end = started + (secondsText.toDouble * 1e9).toLong
    var sent = 0L
    try {
      while (System.nanoTime() < end) {
        val due = ((System.nanoTime() - started) / 1e9 * rate).toLong
        val ms = System.currentTimeMillis()
        while (sent < due) {
          producer.send(new ProducerRecord(topic, Integer.valueOf((sent % partitions).toInt), s"$ms:$sent".getBytes, value), onSent)
          sent += 1
        }
        Thread.sleep(10)
      }
      producer.flush()
    } finally producer.close()
    val seconds = (System.nanoTime() - started) / 1e9
    if (failed.get > 0) throw new IllegalStateException(s"${failed.get} of $sent sends to '$topic' failed")
    println(f"PRODUCED records=$sent started_ms=$startedMs seconds=$seconds%.3f rate=${sent / seconds}%.1f")
  }
}
