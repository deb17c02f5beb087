package streamctl.bench

import streamctl.metadata.{FileSystemMetadataStore, InMemoryMetadataStore, MetadataStore}
import streamctl.startpoint._
import streamctl.system.{SSP, SystemAdmin, TaskName}

/**
 * Times what a query does with startpoints when it starts: fan-out of SSP-only
 * startpoints to tasks, then bulk resolution to offsets (issue target: 2,000 SSPs x 200
 * tasks under 2 s). Two shapes:
 *  - grouped:   2,000 SSPs (10 streams x 200 partitions) in 200 tasks `Partition N`;
 *  - broadcast: every one of the 2,000 SSPs read by all 200 tasks, i.e. 400,000
 *               task-level startpoints (the worst case the product allows).
 * Each shape runs a few times on fresh in-memory stores: the first run is cold (JIT), the
 * best shows the steady cost. For scale, the grouped shape also runs once on the default
 * store on local disk, where each key is a file. Prints, never asserts: `./build.sh bench`
 * runs it.
 *
 * {{{
 * java -cp <test classpath> streamctl.bench.StartpointBench [runs]
 * }}}
 */
object StartpointBench {
  private val Streams = 10
  private val PartitionsPerStream = 200
  private val Tasks = 200
  private val MessagesPerPartition = 100000L

  def main(args: Array[String]): Unit = {
    val runs = args.headOption.map(_.toInt).getOrElse(5)
    val ssps = for (s <- 0 until Streams; p <- 0 until PartitionsPerStream) yield SSP.kafka(s"stream$s", p)
    val tasks = (0 until Tasks).map(i => TaskName(s"Partition $i"))
    val grouped = ssps.groupBy(ssp => tasks(ssp.partition % Tasks)).map { case (t, s) => t -> s.toSet }
    val broadcast = tasks.map(t => t -> ssps.toSet).toMap

    println(s"StartpointBench: ${ssps.size} SSPs ($Streams streams x $PartitionsPerStream partitions), $Tasks tasks, " +
      s"startpoints cycling oldest/upcoming/timestamp/specific, in-memory store and admin, $runs runs, " +
      s"${Runtime.getRuntime.availableProcessors} cores, Java ${System.getProperty("java.version")}")
    for ((shape, mapping) <- Seq("grouped" -> grouped, "broadcast" -> broadcast)) {
      val times = (1 to runs).map(_ => once(ssps, mapping, new InMemoryMetadataStore))
      val pairs = mapping.values.map(_.size).sum
      val best = times.minBy(_.total)
      println(f"  $shape%-9s ${pairs}%7d (SSP, task) pairs: first run ${times.head.total}%6.0f ms, best ${best.total}%6.0f ms " +
        f"(fan-out ${best.fanOut}%.0f ms, resolution ${best.resolve}%.0f ms; removal after commit ${best.remove}%.0f ms, not counted)")
      if (shape == "grouped")
        Summary("startpoints", f"fan-out + resolution, ${ssps.size}%,d SSPs x $Tasks tasks",
          f"first ${times.head.total}%.0f ms, best ${best.total}%.0f ms", "< 2 s")
    }
    val dir = java.nio.file.Files.createTempDirectory("streamctl-startpoint-bench")
    try {
      val onDisk = once(ssps, grouped, new FileSystemMetadataStore(dir.toString, new org.apache.hadoop.conf.Configuration()))
      println(f"  grouped on local disk (FileSystemMetadataStore, one run): ${onDisk.total}%6.0f ms " +
        f"(fan-out ${onDisk.fanOut}%.0f ms, resolution ${onDisk.resolve}%.0f ms; removal after commit ${onDisk.remove}%.0f ms)")
    } finally {
      java.nio.file.Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).forEach(p => java.nio.file.Files.delete(p))
    }
  }

  private final case class Times(fanOut: Double, resolve: Double, remove: Double) { def total: Double = fanOut + resolve }

  private def once(ssps: Seq[SSP], mapping: Map[TaskName, Set[SSP]], store: MetadataStore): Times = {
    val manager = new StartpointManager(store)
    val admin = new SyntheticAdmin
    ssps.zipWithIndex.foreach { case (ssp, i) =>
      manager.write(ssp, i % 4 match {
        case 0 => Startpoint.oldest()
        case 1 => Startpoint.upcoming()
        case 2 => Startpoint.timestamp(SyntheticAdmin.BaseTime + 10 * (i % MessagesPerPartition))
        case _ => Startpoint.specific(SyntheticAdmin.Oldest + i)
      })
    }
    val t0 = System.nanoTime()
    val fanned = manager.fanOut(mapping)
    val t1 = System.nanoTime()
    val resolved = new StartpointResolver(admin).resolveForTasks(fanned.startpoints)
    val t2 = System.nanoTime()
    manager.removeFannedOut(fanned.startpoints)
    val t3 = System.nanoTime()
    if (resolved.size != mapping.values.map(_.size).sum) throw new IllegalStateException(s"resolved only ${resolved.size}")
    Times((t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6)
  }

  /** Every partition holds offsets [Oldest, Oldest + MessagesPerPartition), 10 ms apart. */
  private final class SyntheticAdmin extends SystemAdmin {
    import SyntheticAdmin._
    val system: String = SSP.KafkaSystem
    def partitionCounts(streams: Set[String]): Map[String, Int] = streams.map(_ -> PartitionsPerStream).toMap
    def oldestOffsets(ssps: Set[SSP]): Map[SSP, Long] = ssps.iterator.map(_ -> Oldest).toMap
    def upcomingOffsets(ssps: Set[SSP]): Map[SSP, Long] = ssps.iterator.map(_ -> (Oldest + MessagesPerPartition)).toMap
    def offsetsForTimestamps(timestamps: Map[SSP, Long]): Map[SSP, Long] = timestamps.map { case (ssp, t) =>
      ssp -> (Oldest + math.min(MessagesPerPartition, math.max(0L, (t - BaseTime + 9) / 10)))
    }
  }

  private object SyntheticAdmin {
    val Oldest = 1000L
    val BaseTime = 1700000000000L
  }
}
