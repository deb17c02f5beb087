package streamctl.bench

import streamctl.locality.ExecutorId
import streamctl.metadata.{InMemoryMetadataStore, StoreLayout}
import streamctl.plan.{ReaderReports, ReaderRun}
import streamctl.planner.{InitialOffset, Planner, SourceOptions, SourceStates}
import streamctl.startpoint.FakeSystemAdmin
import streamctl.system.{SSP, SkippedRange}

/**
 * Times the driver's planning of one steady-state micro-batch of one topic with P partitions
 * (issue 28 asks for `latestOffset` + `queryPlanning` <= 100 ms at 4,096): `latestOffset` (the
 * planning chain) and `planReads` (Spark's planInputPartitions, which it calls twice a batch, our
 * part of its queryPlanning), each in wall and thread CPU time (the machine is shared), and apart
 * from them the parse of an offset after a restart (within a run, Spark's `deserializeOffset` finds
 * the source's own offsets without parsing: `spark.RecentOffsets`), with
 * a budget of 2 records per partition, over a system and store held in memory: the planner's own
 * work, without Kafka's round trips or Spark's. Batches 1-9 are reported apart from warmed ones:
 * they are the batches the scale benchmark's figures come from. Prints figures only; it asserts
 * nothing.
 *
 * {{{
 * PlannerBench.main(Array())             // 1,024 and 4,096 partitions
 * PlannerBench.main(Array("8192"))
 * }}}
 */
object PlannerBench {
  private object NoReports extends ReaderReports {
    override def runs: Seq[ReaderRun] = Nil
    override def skipped: Seq[SkippedRange] = Nil
    override def recordTimes: Map[SSP, Long] = Map.empty
    override def clear(): Unit = ()
  }

  def main(args: Array[String]): Unit = {
    val sizes = if (args.isEmpty) Seq(1024, 4096) else args.toSeq.map(_.toInt)
    sizes.foreach { n =>
      val admin = new FakeSystemAdmin
      (0 until n).foreach(p => admin.add(SSP.kafka("orders", p), 0, 0L until 200L))
      val planner = new Planner(SourceOptions(Map("kafka.bootstrap.servers" -> "127.0.0.1:1", "subscribe" -> "orders",
        "startingOffsets" -> "earliest")), admin, new InMemoryMetadataStore, "mem://store", StoreLayout.Source("0"),
        new InitialOffset(() => new InMemoryMetadataStore), () => Seq(ExecutorId("driver", "localhost")), NoReports, query = None)
      var position = planner.initialPosition()
      val threads = java.lang.management.ManagementFactory.getThreadMXBean
      def cpu = threads.getCurrentThreadCpuTime
      // Per batch: (parse, latestOffset, planReads) in wall ms, and the same three in CPU ms. The
      // start is the end planned before, as the source finds it again within a run.
      val times = (0 until 60).map { _ =>
        val start = position
        val (t0, c0) = (System.nanoTime(), cpu)
        SourceStates.parse(start.json) // after a restart: Spark's offset log, read back
        val (t1, c1) = (System.nanoTime(), cpu)
        val next = planner.latestOffset(start, Some(2L * n))
        val (t2, c2) = (System.nanoTime(), cpu)
        planner.planReads(start, next)
        planner.planReads(start, next)
        val (t3, c3) = (System.nanoTime(), cpu)
        next.json // what Spark writes to the offset log
        planner.commit(next)
        position = next
        (Seq(t1 - t0, t2 - t1, t3 - t2).map(_ / 1e6), Seq(c1 - c0, c2 - c1, c3 - c2).map(_ / 1e6))
      }
      def median(xs: Seq[Double]) = xs.sorted.apply(xs.size / 2)
      val load = scala.io.Source.fromFile("/proc/loadavg").getLines().next().split(' ').take(3)
      /* Batches 1-9, as the scale benchmark takes them from a query (its JVM has not compiled the
       * planning yet: about twice the time of the same batches warmed), and batches 20-59. */
      val phases = Seq("batches 1-9" -> times.slice(1, 10), "warmed (20-59)" -> times.drop(20)).map {
        case (label, ts) =>
          val Seq(parse, latest, reads) = (0 until 3).map(i => median(ts.map(_._1(i))))
          val Seq(parseCpu, latestCpu, readsCpu) = (0 until 3).map(i => median(ts.map(_._2(i))))
          println(f"partitions=$n%,d  $label, medians, wall (CPU) ms: latestOffset $latest%.1f ($latestCpu%.1f)" +
            f"  planReads $reads%.1f ($readsCpu%.1f)  deserializeOffset after a restart $parse%.1f ($parseCpu%.1f)" +
            s"  load ${load.mkString(" ")}")
          (latest, reads)
      }
      val ((latest, reads), (warmLatest, warmReads)) = (phases(0), phases(1))
      Summary("planner", f"plan one batch of $n%,d partitions (latestOffset + planReads, no Kafka; batches 1-9)",
        f"${latest + reads}%.0f ms ($latest%.0f + $reads%.0f; warmed ${warmLatest + warmReads}%.0f)", "<= 100 ms at 4,096")
    }
  }
}
