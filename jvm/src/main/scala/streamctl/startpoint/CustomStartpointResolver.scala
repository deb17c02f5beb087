package streamctl.startpoint

import streamctl.system.{SSP, SystemAdmin}

/**
 * Resolves [[Startpoint.Custom]] startpoints of one `kind` to offsets, for all SSPs at once (one
 * call per resolution, so a resolver can batch its own lookups). Offsets it returns are
 * range-checked like specific offsets.
 *
 * A query applies custom startpoints of the kinds its option `startpoint.resolvers` names resolvers
 * for (fully qualified class names, comma-separated, on the Spark classpath; each with a public
 * constructor taking the query's options, as a `Map[String, String]` or a `java.util.Map`, or
 * none). A custom startpoint of another kind stops the query from starting, naming it, and stays in
 * the store.
 *
 * {{{
 * class FromHeaderMark extends CustomStartpointResolver {
 *   val kind = "header-mark"
 *   def resolve(startpoints: Map[SSP, Startpoint.Custom], admin: SystemAdmin) =
 *     startpoints.map { case (ssp, c) => ssp -> lookUpMark(ssp, c.payload) }
 * }
 * // .option("startpoint.resolvers", "com.acme.FromHeaderMark")
 * }}}
 */
trait CustomStartpointResolver {
  def kind: String

  /** An offset for every SSP given; a missing one is reported as an error naming the SSP. */
  def resolve(startpoints: Map[SSP, Startpoint.Custom], admin: SystemAdmin): Map[SSP, Long]
}
