package streamctl.bench

import streamctl.grouper.{GrouperConfig, Grouping, TaskMapping}

/**
 * Times the grouping the planner runs at each partition check, at 100,000 SSPs with a previous
 * mapping (issue 6 asks for < 1 s), in two shapes: a steady check (nothing changed, the
 * common case) and a check that finds every stream doubled (half the SSPs are new). Also
 * times the JSON round trip, since the mapping is written to the Offset of every batch.
 * Prints figures only; it asserts nothing, so a slow machine cannot fail the build.
 *
 * {{{
 * GrouperBench.main(Array())            // 100 streams x 1,000 partitions
 * GrouperBench.main(Array("10", "500")) // 10 streams x 500 partitions
 * }}}
 */
object GrouperBench {
  def main(args: Array[String]): Unit = {
    val streams = args.lift(0).map(_.toInt).getOrElse(100)
    val partitions = args.lift(1).map(_.toInt).getOrElse(1000)
    val rounds = args.lift(2).map(_.toInt).getOrElse(5)
    val names = (0 until streams).map(i => f"stream-$i%03d")
    val full = names.map(_ -> partitions).toMap
    val half = names.map(_ -> partitions / 2).toMap

    for (grouper <- Seq("partition", "ssp", "single")) {
      val config = GrouperConfig.parse(Map("grouper" -> grouper), names)
      val before = Grouping(config, None, half)
      val steadyPrev = Grouping(config, None, full)
      println(s"grouper=$grouper streams=$streams partitions/stream=$partitions SSPs=${streams * partitions} " +
        s"tasks=${steadyPrev.tasks.size}")
      val steady = report("  steady (previous has every SSP)", rounds)(Grouping(config, Some(fresh(steadyPrev)), full))
      val grown = report(s"  expansion ${partitions / 2}->$partitions per stream", rounds)(Grouping(config, Some(fresh(before)), full))
      if (grouper == "partition") {
        val ssps = f"${streams * partitions}%,d SSPs"
        Summary("grouper", s"group $ssps, steady", f"$steady%.0f ms", "< 1 s")
        Summary("grouper", s"group $ssps, every stream ${partitions / 2}->$partitions partitions", f"$grown%.0f ms", "< 1 s")
      }
      val json = steadyPrev.toJson
      report(f"  toJson (${json.length / 1e6}%.1f MB)", rounds)(steadyPrev.toJson)
      report("  fromJson", rounds)(TaskMapping.fromJson(json, "bench"))
    }
  }

  // A copy whose lazily derived SSP index is not built yet, as after a restart: timing a
  // previous mapping whose index an earlier round already built would flatter the figure.
  private def fresh(m: TaskMapping): TaskMapping = m.copy()

  /** Runs `body` once to warm up, then `rounds` times; prints the best and the median, returns the median. */
  private def report(label: String, rounds: Int)(body: => Any): Double = {
    body
    val times = (1 to rounds).map { _ =>
      val start = System.nanoTime()
      body
      (System.nanoTime() - start) / 1e6
    }.sorted
    println(f"$label%-45s best ${times.head}%8.1f ms   median ${times(times.size / 2)}%8.1f ms")
    times(times.size / 2)
  }
}
