package streamctl.startpoint

/**
 * A startpoint under its store key, as the commands report it: `startpoint` is Left(the parse
 * error) when the stored value is corrupt; `resolution` is where it starts when it was resolved
 * against Kafka (set or preview with bootstrap servers).
 */
final case class StartpointEntry(
    key: StartpointKey,
    startpoint: Either[String, Startpoint],
    resolution: Option[Resolution]
) {

  /** `timestamp 2024-05-01T10:00:00Z`, or `corrupt: <why>`. */
  def description: String = startpoint.fold(error => s"corrupt: $error", _.describe)
}
