package streamctl.startpoint

/**
 * A startpoint under its store key, as the commands report it: `startpoint` is Left(the parse
 * error) when the stored value is corrupt or the key is not canonical; `resolution` is where it
 * starts when it was resolved against Kafka (set or preview with bootstrap servers). `storeKey` is
 * the key as stored, which differs from `key.storeKey` only for a non-canonical key
 * (`kafka/orders/03` for `key` orders-3).
 */
final case class StartpointEntry(
    key: StartpointKey,
    startpoint: Either[String, Startpoint],
    resolution: Option[Resolution],
    storeKey: String
) {

  /** `timestamp 2024-05-01T10:00:00Z`, or `corrupt: <why>`. */
  def description: String = startpoint.fold(error => s"corrupt: $error", _.describe)
}

object StartpointEntry {

  /** An entry stored under its canonical key. */
  def apply(
      key: StartpointKey,
      startpoint: Either[String, Startpoint],
      resolution: Option[Resolution]
  ): StartpointEntry = StartpointEntry(key, startpoint, resolution, key.storeKey)
}
