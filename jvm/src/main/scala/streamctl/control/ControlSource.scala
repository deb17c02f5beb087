package streamctl.control

/** What a streamctl source tells the query's control. */
trait ControlSource {
  def hasIntermediateStreams: Boolean

  /** The freshest watermark over the source's intermediate SSPs, if defined. */
  def upstreamWatermark: Option[Long]
  def stopOnEndOfStream: Boolean
}
