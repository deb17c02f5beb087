package streamctl.chooser

import streamctl.StreamctlException
import streamctl.system.SSP

/**
 * Dense ids 0..size-1 for the SSPs a chooser registered, so per-SSP state can live in arrays
 * instead of maps on the per-record path.
 *
 * A reader normally reuses one SSP instance per partition, so a direct-mapped identity cache
 * answers most look-ups with one pointer compare; a miss (another instance of an equal SSP) falls
 * back to a hash map and then takes over the slot, so the cache stays bounded whatever the caller
 * does.
 *
 * {{{
 * val idx = new SspIndex
 * idx.add(SSP.kafka("orders", 0))   // 0
 * idx.idOf(SSP.kafka("orders", 0))  // 0
 * }}}
 */
private[chooser] final class SspIndex {
  private val ids = new java.util.HashMap[SSP, Integer]()
  private var byId = new Array[SSP](8)
  private var cacheKeys = new Array[SSP](16)
  private var cacheIds = new Array[Int](16)
  private var mask = 15

  def size: Int = ids.size

  def ssp(id: Int): SSP = byId(id)

  /** Id of `ssp`, adding it when new; adding twice returns the first id. */
  def add(ssp: SSP): Int = {
    val known = ids.get(ssp)
    if (known != null) return known.intValue
    val id = ids.size
    ids.put(ssp, Integer.valueOf(id))
    if (id == byId.length) byId = java.util.Arrays.copyOf(byId, id * 2)
    byId(id) = ssp
    // Twice the SSP count keeps identity-hash collisions between live SSPs rare.
    if (ids.size * 2 > cacheKeys.length) {
      cacheKeys = new Array[SSP](cacheKeys.length * 2)
      cacheIds = new Array[Int](cacheKeys.length)
      mask = cacheKeys.length - 1
    }
    id
  }

  /** Id of `ssp`, or -1 when it was never added. */
  def idOf(ssp: SSP): Int = {
    val slot = System.identityHashCode(ssp) & mask
    if (cacheKeys(slot) eq ssp) return cacheIds(slot)
    val id = ids.get(ssp)
    if (id == null) return -1
    cacheKeys(slot) = ssp
    cacheIds(slot) = id.intValue
    id.intValue
  }

  /** Id of `ssp`; an SSP the chooser was never told about is a caller bug worth naming. */
  def require(ssp: SSP, chooser: String): Int = {
    val id = idOf(ssp)
    if (id < 0) throw StreamctlException(
      s"$chooser got an envelope of SSP ${ssp.key}, which was never registered"
    )
    id
  }
}
