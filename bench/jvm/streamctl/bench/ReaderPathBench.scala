package streamctl.bench


import org.apache.kafka.clients.consumer.{ConsumerRecord, ConsumerRecords}
import org.apache.kafka.common.TopicPartition

import streamctl.chooser.{ChooserConfig, ChooserFactory}
import streamctl.control.{IntermediateMessage, TaskControl, TaskControlReader, WatermarkSummary}
import streamctl.spark.EnvelopeRowConverter
import streamctl.system.{BrokerWait, EnvelopeDecoder, KafkaMocks, KafkaTaskReader, SSP, SspRange, TaskName}

/**
 * Cost of the reader path per record, the way an executor runs it: Kafka reader -> control
 * decoding (intermediate streams) -> chooser -> row, over a consumer fed from records prepared
 * in advance (so neither a broker nor the JIT's view of one skews it), for a plain and an
 * intermediate stream of 100-byte values, one and four SSPs per task. Reports the median time
 * and the bytes allocated per record (the allocation figure does not depend on machine load).
 *
 * {{{
 * java -cp <bench classpath> streamctl.bench.ReaderPathBench            // every case, one JVM each
 * java -cp <bench classpath> streamctl.bench.ReaderPathBench 1000000    // records per round
 * }}}
 */
object ReaderPathBench {
  private val Rounds = 9
  private val Warmups = 5

  private val Cases = for (intermediate <- Seq(false, true); ssps <- Seq(1, 4)) yield (intermediate, ssps)

  def main(args: Array[String]): Unit = args.toList match {
    case "--child" :: intermediate :: ssps :: records :: Nil =>
      val (ns, bytes) = run(records.toInt, ssps.toInt, intermediate.toBoolean)
      println(s"RESULT $ns $bytes")
    case rest =>
      val records = rest.headOption.map(_.toInt).getOrElse(400000)
      println(s"ReaderPathBench: java ${System.getProperty("java.version")}, $records records/round of 100 B, " +
        s"median of $Rounds rounds after $Warmups warm-ups, one JVM per case")
      for ((intermediate, ssps) <- Cases) {
        val (ns, bytes) = child(intermediate, ssps, records)
        val what = s"${if (intermediate) "intermediate" else "plain"} stream, $ssps SSP(s)"
        println(f"  reader -> ${if (intermediate) "control -> " else ""}chooser -> row, $what%-35s $ns%8.1f ns/record, $bytes%6.1f B allocated/record")
        Summary("reader", s"one record through the reader path, $what", f"$ns%.1f ns, $bytes%.0f B")
      }
  }

  /** Runs one case in a fresh JVM, so the JIT profile of one case does not slow the next. */
  private def child(intermediate: Boolean, ssps: Int, records: Int): (Double, Double) = {
    val javaBin = java.nio.file.Paths.get(System.getProperty("java.home"), "bin", "java").toString
    val p = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), getClass.getName.stripSuffix("$"),
      "--child", intermediate.toString, ssps.toString, records.toString).redirectErrorStream(true).start()
    val out = scala.io.Source.fromInputStream(p.getInputStream).getLines().toList
    if (p.waitFor() != 0) throw new IllegalStateException(out.mkString("\n"))
    out.collectFirst { case l if l.startsWith("RESULT ") =>
      val Array(ns, bytes) = l.stripPrefix("RESULT ").split(' ').map(_.toDouble)
      (ns, bytes)
    }.get
  }

  private val threads = java.lang.management.ManagementFactory.getThreadMXBean.asInstanceOf[com.sun.management.ThreadMXBean]
  private def allocated(): Long = threads.getThreadAllocatedBytes(Thread.currentThread().getId)

  /** (median ns per record, median bytes allocated per record). */
  private def run(records: Int, sspCount: Int, intermediate: Boolean): (Double, Double) = {
    val stream = if (intermediate) "mid" else "plain"
    val ssps = (0 until sspCount).map(p => SSP.kafka(stream, p))
    val perSsp = records / sspCount
    val payload = Array.tabulate[Byte](100)(i => ('a' + i % 26).toByte)
    val value = if (intermediate) IntermediateMessage.frameUser(payload) else payload
    val key = "k".getBytes
    val prepared = ssps.map { s =>
      s -> Array.tabulate(perSsp)(o => new ConsumerRecord[Array[Byte], Array[Byte]](s.stream, s.partition, o.toLong, key, value))
    }
    val ranges = ssps.map(s => SspRange(s, 0L, perSsp.toLong))
    val control = TaskControlReader(TaskName("Partition 0"), ranges, Some(TaskControl(1, "{}", WatermarkSummary.empty)), Set("mid"))
    val wait = BrokerWait("mock", 60000, "kafka.default.api.timeout.ms")
    val times = (0 until Warmups + Rounds).map { _ =>
      val consumer = new FeedConsumer(prepared.map { case (s, rs) => new TopicPartition(s.stream, s.partition) -> rs }.toMap)
      val chooser = ChooserFactory.forReader(ChooserConfig.default, ssps.map(_ -> 0L).toMap, Map.empty)
      val reader = new KafkaTaskReader(ranges, consumer, chooser, wait, true,
        ssp => control.fold(EnvelopeDecoder.Identity)(_.decoderFor(ssp)))
      val converter = new EnvelopeRowConverter(TaskName("Partition 0"), includeHeaders = false)
      val a0 = allocated()
      val t0 = System.nanoTime()
      var n = 0L
      var e = reader.next()
      while (e != null) {
        val row = converter.toRow(e, control.fold(-1L)(_.watermarkMs(e.ssp)))
        n += row.getLong(4)
        e = reader.next()
      }
      val t = System.nanoTime() - t0
      val bytes = allocated() - a0
      if (n < 0) println(n) // consumed, so the JIT cannot drop the work
      (t.toDouble / (perSsp.toLong * sspCount), bytes.toDouble / (perSsp.toLong * sspCount))
    }.drop(Warmups)
    (times.map(_._1).sorted.apply(Rounds / 2), times.map(_._2).sorted.apply(Rounds / 2))
  }
}

/**
 * A consumer fed from arrays prepared in advance: each poll hands out up to 500 records per
 * assigned, unpaused partition (Kafka's default `max.poll.records`), as views of those arrays,
 * so the loop measures the reader path rather than a broker or MockConsumer's own bookkeeping.
 */
final class FeedConsumer(feeds: Map[TopicPartition, Array[ConsumerRecord[Array[Byte], Array[Byte]]]])
    extends KafkaMocks.FromEarliest[Array[Byte], Array[Byte]] {
  private val positions = scala.collection.mutable.HashMap.empty[TopicPartition, Long]
  private val lists = feeds.map { case (tp, rs) => tp -> java.util.Arrays.asList(rs: _*) }

  override def seek(tp: TopicPartition, offset: Long): Unit = positions(tp) = offset
  override def position(tp: TopicPartition): Long = positions(tp)

  override def poll(timeout: java.time.Duration): ConsumerRecords[Array[Byte], Array[Byte]] = {
    val out = new java.util.HashMap[TopicPartition, java.util.List[ConsumerRecord[Array[Byte], Array[Byte]]]]()
    val paused = this.paused()
    this.assignment().forEach { tp =>
      val from = positions(tp).toInt
      val all = lists(tp)
      if (!paused.contains(tp) && from < all.size) {
        val until = math.min(all.size, from + 500)
        out.put(tp, all.subList(from, until))
        positions(tp) = until.toLong
      }
    }
    KafkaMocks.records(out)
  }
}
