package streamctl
package testing.examples

import streamctl.StreamctlException
import streamctl.startpoint.{CustomStartpointResolver, Startpoint}
import streamctl.system.{SSP, SystemAdmin}

/**
 * An example of a custom startpoint resolver (option `startpoint.resolvers`), shipped in
 * streamctl-testing so that the docs and tests can load one by name: kind `rewind`, payload a
 * number of records N, resolves to N records before the partition's end (its oldest record when it
 * holds fewer). A user's resolver has the same shape: a public class with a constructor taking the
 * query's options (or none), one `kind`, and `resolve` answering for all SSPs at once.
 *
 * {{{
 * manager.set("orders", 0, Startpoint.custom("rewind", "100"))           // Python
 * .option("startpoint.resolvers", "streamctl.testing.examples.RewindResolver")
 * }}}
 */
class RewindResolver extends CustomStartpointResolver {
  override val kind: String = "rewind"

  override def resolve(
      startpoints: Map[SSP, Startpoint.Custom],
      admin: SystemAdmin
  ): Map[SSP, Long] = {
    val ends = admin.upcomingOffsets(startpoints.keySet)
    val oldest = admin.oldestOffsets(startpoints.keySet)
    startpoints.map { case (ssp, c) =>
      val n = c.payload.trim.toLongOption.filter(_ >= 0).getOrElse(
        throw StreamctlException(
          s"Startpoint 'rewind' of $ssp: payload '${c.payload}' is not a number of records"
        )
      )
      ssp -> math.max(oldest(ssp), ends(ssp) - n)
    }
  }
}
