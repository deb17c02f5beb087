package streamctl.bench

/**
 * One headline figure of a JVM benchmark, printed as a tab-separated `SUMMARY` line that
 * bench/run.py gathers into the table it prints at the end of `./build.sh bench`.
 *
 * {{{
 * Summary("grouper", "group 100,000 SSPs, steady", "62.8 ms", "< 1 s")
 * }}}
 */
object Summary {
  def apply(bench: String, what: String, value: String, target: String = ""): Unit =
    println(Seq("SUMMARY", bench, what, value, target).mkString("\t"))
}
