package streamctl.bench

import java.lang.management.ManagementFactory

import scala.jdk.CollectionConverters._

import streamctl.chooser.{ChooserConfig, ChooserFactory, MessageChooser}
import streamctl.system.{Envelope, SSP}

/**
 * Cost of the chooser hot path: nanoseconds per chosen envelope, driven the way a task's
 * reader drives it (every SSP has one envelope offered; after each choose the next
 * envelope of the chosen SSP is offered). Envelopes are preallocated, so the loop measures
 * the chooser, not the allocator.
 *
 * Each (chooser, SSP count) runs in a fresh JVM, so the JIT's type profile of one chooser
 * does not slow down the next (a real executor runs one configuration). Per run: warm-up
 * iterations, then measured iterations of `ops` chooses each; the median is reported.
 *
 * {{{
 * java -cp target/classes:target/test-classes:<scala-library.jar> streamctl.bench.ChooserBench
 * java ... streamctl.bench.ChooserBench --in-process            # one JVM, faster, noisier
 * java ... streamctl.bench.ChooserBench --only time-aligned 64  # one cell
 * }}}
 */
object ChooserBench {
  private val SspCounts = Seq(4, 64, 1024)
  private val Warmup = 10
  private val Measured = 15
  private val Ops = 1 << 20
  private val Ring = 64 // preallocated envelopes per SSP, reused in turn

  /** A bench case: chooser options, and which SSPs are bootstrap SSPs still far from their head. */
  private final case class Case(name: String, options: Map[String, String], describe: String)

  private val cases = Seq(
    Case("round-robin", Map.empty, "default chain: RoundRobinChooser only"),
    Case("batching", Map("chooser.batch.size" -> "8"), "BatchingChooser(8) over round-robin"),
    Case("priority", Map("stream.p1.priority" -> "1", "stream.p2.priority" -> "2", "stream.p3.priority" -> "3"),
      "TieredPriorityChooser, 4 tiers (SSPs spread over streams p0..p3), round-robin per tier"),
    Case("bootstrap", Map("stream.p0.bootstrap" -> "true", "stream.p1.bootstrap" -> "true"),
      "BootstrappingChooser while bootstrapping: half the SSPs bootstrap (never reach head), half held back"),
    Case("time-aligned", Map("chooser" -> "time-aligned"), "TimeAlignedChooser (min-heap on timestamp)"),
    Case("all-composed", Map("chooser" -> "time-aligned", "chooser.batch.size" -> "8", "stream.p2.priority" -> "1",
      "stream.p3.priority" -> "1", "stream.p0.bootstrap" -> "true"),
      "bootstrap(1/4 of SSPs) > priority(2 tiers) > batching(8) > time-aligned"))

  private val Streams = Seq("p0", "p1", "p2", "p3")

  def main(args: Array[String]): Unit = args.toList match {
    case "--child" :: name :: n :: Nil =>
      val r = measure(cases.find(_.name == name).get, n.toInt)
      println(s"RESULT $name $n ${r.mkString(" ")}")
    case "--only" :: name :: n :: Nil => report(Seq(run(cases.find(_.name == name).get, n.toInt, fork = false)))
    case "--in-process" :: Nil => report(for (c <- cases; n <- SspCounts) yield run(c, n, fork = false))
    case Nil => report(for (c <- cases; n <- SspCounts) yield run(c, n, fork = true))
    case _ => System.err.println("usage: ChooserBench [--in-process | --only <case> <ssps>]"); sys.exit(2)
  }

  private final case class Row(c: Case, ssps: Int, median: Double, min: Double, max: Double)

  private def run(c: Case, n: Int, fork: Boolean): Row = {
    val r =
      if (!fork) measure(c, n)
      else {
        val java = s"${System.getProperty("java.home")}/bin/java"
        val jvmArgs = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala.toSeq
        val cmd = Seq(java) ++ jvmArgs ++ Seq("-cp", System.getProperty("java.class.path"), getClass.getName.stripSuffix("$"),
          "--child", c.name, n.toString)
        val p = new ProcessBuilder(cmd: _*).redirectErrorStream(true).start()
        val out = scala.io.Source.fromInputStream(p.getInputStream).getLines().toList
        if (p.waitFor() != 0) sys.error(s"bench child ${c.name}/$n failed:\n${out.mkString("\n")}")
        out.find(_.startsWith("RESULT ")).get.split(' ').drop(3).map(_.toDouble).toSeq
      }
    System.err.println(f"  ${c.name}%-13s ${n}%5d SSPs: ${r.head}%7.1f ns")
    Row(c, n, r(0), r(1), r(2))
  }

  /** Median, min, max ns per chosen envelope. */
  private def measure(c: Case, n: Int): Seq[Double] = {
    val ssps = (0 until n).map(i => SSP.kafka(Streams(i % Streams.size), i)) // partition = index, unique
    val config = ChooserConfig.parse(c.options, Streams)
    val heads = ssps.filter(s => config.isBootstrap(s.stream)).map(_ -> Long.MaxValue).toMap
    val rnd = new java.util.Random(17)
    val ring = Array.tabulate(n) { i =>
      Array.tabulate(Ring)(k => new Envelope(ssps(i), k.toLong, 1000000L + k * 10L + rnd.nextInt(10), null, null))
    }
    val pos = new Array[Int](n)
    val chooser = ChooserFactory.forTask(config, ssps.map(_ -> 0L).toMap, heads)
    var i = 0
    while (i < n) { chooser.update(ring(i)(0)); pos(i) = 1; i += 1 }

    var sink = 0L
    def iteration(): Double = {
      val t0 = System.nanoTime()
      sink += loop(chooser, ring, pos, Ops)
      (System.nanoTime() - t0).toDouble / Ops
    }
    (1 to Warmup).foreach(_ => iteration())
    val times = (1 to Measured).map(_ => iteration()).sorted
    if (sink == 42) println("") // keeps the loop's result alive
    Seq(times(times.size / 2), times.head, times.last)
  }

  // Kept small and separate so the JIT compiles it as one hot loop.
  private def loop(c: MessageChooser, ring: Array[Array[Envelope]], pos: Array[Int], ops: Int): Long = {
    var sum = 0L
    var k = 0
    while (k < ops) {
      val e = c.choose()
      sum += e.offset
      val s = e.ssp.partition
      val p = pos(s)
      c.update(ring(s)(p & (Ring - 1)))
      pos(s) = p + 1
      k += 1
    }
    sum
  }

  private def report(rows: Seq[Row]): Unit = {
    val rt = ManagementFactory.getRuntimeMXBean
    println(s"ChooserBench: ns per chosen envelope (median of $Measured iterations x $Ops chooses, after $Warmup warm-up)")
    println(s"JVM ${rt.getVmName} ${rt.getVmVersion}, ${Runtime.getRuntime.availableProcessors} cores, " +
      s"${Ring} preallocated envelopes per SSP, every SSP always has one envelope offered")
    println()
    rows.map(_.c).distinct.foreach(c => println(f"  ${c.name}%-13s ${c.describe}"))
    println()
    println(f"${"chooser"}%-13s ${"SSPs"}%6s ${"median"}%9s ${"min"}%8s ${"max"}%8s")
    rows.foreach(r => println(f"${r.c.name}%-13s ${r.ssps}%6d ${r.median}%9.1f ${r.min}%8.1f ${r.max}%8.1f"))
    rows.filter(_.ssps == 64).foreach(r => Summary("chooser", s"${r.c.name}, 64 SSPs", f"${r.median}%.1f ns/envelope", "<= 100 ns"))
  }
}
