package streamctl.control

/**
 * The query a streamctl source belongs to, as the source's in-band control sees it: one per run of
 * a streaming query, on the driver ([[RunControl]]; `spark.QueryControl` finds its query in Spark).
 * The source tells it what each planning round found (did the inputs end? is there new data?) and
 * asks whether the user called `end_of_stream`; the query decides when end-of-stream goes
 * downstream and when the query stops.
 *
 * {{{
 * query.addSource(source)
 * query.sourcePlanned(source, Some(InputsEnded.EndOfStream), newData = false)
 * }}}
 */
trait ControlledQuery {
  def addSource(source: ControlSource): Unit

  /** `streamctl.end_of_stream(query)` asked: sources admit no more data from now on. */
  def endRequested: Boolean

  /**
   * A source planned a batch: `ended` when its inputs ended, `newData` when the batch reads
   * something.
   */
  def sourcePlanned(source: ControlSource, ended: Option[InputsEnded], newData: Boolean): Unit

  /**
   * A source reported, for the batch Spark just ran, whether every one of its SSPs is at
   * end-of-stream.
   */
  def sourceAtEndOfStream(source: ControlSource, atEnd: Boolean): Unit

  /** Called by each streamctl source as the query stops, on its thread. */
  def sourceStopped(): Unit
}
