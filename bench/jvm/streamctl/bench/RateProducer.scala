package streamctl.bench

import org.apache.kafka.clients.producer.{Callback, KafkaProducer, ProducerConfig, ProducerRecord, RecordMetadata}

import streamctl.control.IntermediateMessage
import streamctl.system.KafkaParams

/**
 * The fixed-rate input of the latency benchmarks (bench/pipeline.py, bench/realtime_latency.py):
 * writes `rate` records a second to a topic for `seconds`, round-robin over its partitions, in a
 * JVM of its own so the rate does not depend on the Spark JVM it feeds. Each record's key is
 * `<wall ms just before the send>:<sequence>`, so the reader can compute its latency; values are
 * `value bytes` letters. Every `--tick-ms` (default 10) it sends what is due by then. At the end it
 * flushes and prints how many records it wrote and the rate achieved; it fails if any send failed.
 *
 * Options after the six arguments:
 *  - `--framed`: the records are in streamctl's intermediate format, as an upstream streamctl
 *    query writes them, from producer `src` (1 of 1);
 *  - `--watermark-every-ms N` (with `--framed`): also sends that producer's watermark (the
 *    current wall time) to every partition every N ms;
 *  - `--linger-ms N`: the producer's `linger.ms` (default: Kafka's), so a real-time latency
 *    run can take the input's own batching out of what it measures.
 *
 * {{{
 * RateProducer.main(Array("127.0.0.1:9092", "bench-e2e-in-0", "8", "5000", "35", "100"))
 * // PRODUCED records=175000 started_ms=1795400000000 seconds=35.001 rate=4999.9
 * RateProducer.main(Array("127.0.0.1:9092", "bench-rt-in", "1", "1000", "30", "10",
 *   "--framed", "--watermark-every-ms", "100", "--tick-ms", "1", "--linger-ms", "0"))
 * }}}
 */
object RateProducer {
  private val Usage = "usage: RateProducer <bootstrap servers> <topic> <partitions> <records/s> <seconds> <value bytes> " +
    "[--framed] [--watermark-every-ms N] [--tick-ms N] [--linger-ms N]"

  final case class Flags(framed: Boolean = false, watermarkEveryMs: Long = 0, tickMs: Long = 10,
                         lingerMs: Option[String] = None)

  @annotation.tailrec
  private def flags(rest: List[String], f: Flags): Flags = rest match {
    case Nil => f
    case "--framed" :: tail => flags(tail, f.copy(framed = true))
    case "--watermark-every-ms" :: n :: tail => flags(tail, f.copy(watermarkEveryMs = n.toLong))
    case "--tick-ms" :: n :: tail => flags(tail, f.copy(tickMs = n.toLong))
    case "--linger-ms" :: n :: tail => flags(tail, f.copy(lingerMs = Some(n)))
    case other :: _ => fail(s"unknown or incomplete option '$other'")
  }

  private def fail(why: String): Nothing = {
    System.err.println(s"$why\n$Usage")
    sys.exit(2)
  }

  def main(args: Array[String]): Unit = {
    if (args.length < 6) fail("six arguments are required")
    val Array(servers, topic, partitionsText, rateText, secondsText, sizeText) = args.take(6)
    val f = flags(args.drop(6).toList, Flags())
    if (f.watermarkEveryMs > 0 && !f.framed) fail("--watermark-every-ms needs --framed")
    val partitions = partitionsText.toInt
    val rate = rateText.toDouble
    val letters = Array.tabulate[Byte](sizeText.toInt)(i => ('a' + i % 26).toByte)
    val value = if (f.framed) IntermediateMessage.frameUser(letters) else letters
    val config = new java.util.HashMap[String, Object](KafkaParams(Map("bootstrap.servers" -> servers)).producer)
    f.lingerMs.foreach(config.put(ProducerConfig.LINGER_MS_CONFIG, _))
    val producer = new KafkaProducer[Array[Byte], Array[Byte]](config)
    val failed = new java.util.concurrent.atomic.AtomicLong
    val onSent = new Callback {
      def onCompletion(m: RecordMetadata, e: Exception): Unit = if (e != null) failed.incrementAndGet()
    }
    val startedMs = System.currentTimeMillis()
    val started = System.nanoTime()
    val end = started + (secondsText.toDouble * 1e9).toLong
    var sent = 0L
    var nextWatermark = startedMs
    try {
      while (System.nanoTime() < end) {
        val due = ((System.nanoTime() - started) / 1e9 * rate).toLong
        val ms = System.currentTimeMillis()
        while (sent < due) {
          producer.send(new ProducerRecord(topic, Integer.valueOf((sent % partitions).toInt), s"$ms:$sent".getBytes, value), onSent)
          sent += 1
        }
        if (f.watermarkEveryMs > 0 && ms >= nextWatermark) {
          val watermark = IntermediateMessage.watermark("src", 1, ms)
          for (p <- 0 until partitions)
            producer.send(new ProducerRecord[Array[Byte], Array[Byte]](topic, Integer.valueOf(p), null, watermark), onSent)
          nextWatermark = ms + f.watermarkEveryMs
        }
        Thread.sleep(f.tickMs)
      }
      producer.flush()
    } finally producer.close()
    val seconds = (System.nanoTime() - started) / 1e9
    if (failed.get > 0) throw new IllegalStateException(s"${failed.get} of $sent sends to '$topic' failed")
    println(f"PRODUCED records=$sent started_ms=$startedMs seconds=$seconds%.3f rate=${sent / seconds}%.1f")
  }
}
