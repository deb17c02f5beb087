package streamctl

/**
 * Runs every step of a shutdown even when an earlier one throws, as try-with-resources does: a stop
 * that gave up at its first failure left the resources after it open (an interrupted query thread's
 * stop skipped the admin client and the metadata store). Once every step ran, the first failure is
 * rethrown with the later ones suppressed in it.
 *
 * {{{
 * Closing.all(() => planner.stop(), () => admin.close(), () => store.close())
 * }}}
 */
object Closing {
  def all(steps: (() => Unit)*): Unit = {
    var first: Throwable = null
    steps.foreach { step =>
      try step()
      catch {
        case t: Throwable =>
          if (first == null) first = t
          else if (first ne t) first.addSuppressed(t)
      }
    }
    if (first != null) throw first
  }
}
