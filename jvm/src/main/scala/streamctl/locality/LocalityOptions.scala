package streamctl.locality

import streamctl.config.OptionSpec

/** The host affinity option of the source. */
object LocalityOptions {
  val HostAffinity: OptionSpec[Boolean] = OptionSpec.bool("host.affinity",
    "keep each task on the executor it ran on before", default = true)
}
