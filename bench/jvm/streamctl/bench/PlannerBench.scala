package streamctl.bench

import streamctl.locality.ExecutorId
import streamctl.metadata.{InMemoryMetadataStore, StoreLayout}
import streamctl.plan.{ReaderReports, ReaderRun}
import streamctl.planner.{InitialOffset, Planner, SourceOptions}
import streamctl.startpoint.FakeSystemAdmin
import streamctl.system.{SSP, SkippedRange}

/**
 * Times the driver's planning of one steady-state micro-batch of one topic with P partitions
 * (issue 28 asks for `latestOffset` + `queryPlanning` <= 100 ms at 4,096): `latestOffset` (the
 * planning chain) and `planReads` (Spark's planInputPartitions, most of its queryPlanning), with
 * a budget of 2 records per partition, over a system and store held in memory: the planner's own
 * work, without Kafka's round trips or Spark's. Prints figures only; it asserts nothing.
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
      val times = (0 until 60).map { _ =>
        val t0 = System.nanoTime()
        val next = planner.latestOffset(position, Some(2L * n))
        val t1 = System.nanoTime()
        planner.planReads(position, next)
        val t2 = System.nanoTime()
        next.json // what Spark writes to the offset log
        planner.commit(next)
        position = next
        ((t1 - t0) / 1e6, (t2 - t1) / 1e6)
      }.drop(20) // JIT warm-up
      def median(xs: Seq[Double]) = xs.sorted.apply(xs.size / 2)
      val (latest, reads) = (median(times.map(_._1)), median(times.map(_._2)))
      println(f"partitions=$n%,d  latestOffset median $latest%.1f ms  planReads median $reads%.1f ms")
      Summary("planner", f"plan one batch of $n%,d partitions (latestOffset + planReads, no Kafka)",
        f"${latest + reads}%.0f ms ($latest%.0f + $reads%.0f)", "<= 100 ms at 4,096")
    }
  }
}
