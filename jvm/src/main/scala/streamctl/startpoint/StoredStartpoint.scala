package streamctl.startpoint

/** A startpoint as found in the metadata store, with the key it is stored under. */
final case class StoredStartpoint(key: StartpointKey, startpoint: Startpoint) {
  override def toString: String = s"$key: ${startpoint.describe}"
}
