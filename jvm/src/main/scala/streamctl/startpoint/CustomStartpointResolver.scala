package streamctl.startpoint

import streamctl.system.{SSP, SystemAdmin}

/**
 * Resolves [[Startpoint.Custom]] startpoints of one `kind` to offsets, for all SSPs at once
 * (one call per resolution, so a resolver can batch its own lookups). Offsets it returns
 * are range-checked like specific offsets.
 *
 * {{{
 * object FromHeaderMark extends CustomStartpointResolver {
 *   val kind = "header-mark"
 *   def resolve(startpoints: Map[SSP, Startpoint.Custom], admin: SystemAdmin) =
 *     startpoints.map { case (ssp, c) => ssp -> lookUpMark(ssp, c.payload) }
 * }
 * new StartpointResolver(admin, Seq(FromHeaderMark))
 * }}}
 */
trait CustomStartpointResolver {
  def kind: String

  /** An offset for every SSP given; a missing one is reported as an error naming the SSP. */
  def resolve(startpoints: Map[SSP, Startpoint.Custom], admin: SystemAdmin): Map[SSP, Long]
}
