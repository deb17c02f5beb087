package streamctl.control

/** Where a query's control messages go: one intermediate stream, as one producer. */
trait ControlSink {
  def stream: String
  def producer: String

  /** Two sinks with the same target are the same sink. */
  def target: (String, String)

  /** A batch is about to write (before its writers start). */
  def batchStarted(): Unit

  /**
   * The stream's partition count for the batch running now, asked at most once per batch over a
   * connection the sink keeps open for the run (Spark builds the sink's write at every batch, and
   * opening an admin client for each cost more than the batch's planning): the batch's writers
   * spread keyed records over exactly these partitions.
   */
  def batchPartitionCount(): Int

  /**
   * The batch's writers committed; `watermark`: the query's watermark to send downstream if it
   * advanced.
   */
  def batchCommitted(wroteData: Boolean, watermark: Option[Long]): Unit
  def batchAborted(): Unit

  /**
   * Real-time mode: from now on, sends `watermark()` whenever it advanced, checked at the sink's
   * watermark interval (not only after each batch: a real-time batch lasts minutes).
   */
  def realTime(watermark: () => Option[Long]): Unit
  def endOfStream(watermark: Option[Long]): Unit

  /**
   * The run finished its inputs but the stream goes on (a scheduled `Trigger.AvailableNow` run):
   * idle until the next.
   */
  def runFinished(): Unit

  /** The run ended: no more idle checks, connections closed (a later send opens them again). */
  def close(): Unit

  /**
   * The run registered this sink ([[RunControl.addSink]]): it may start its own checks (idle
   * timeouts).
   */
  def start(): Unit = ()

  /** How many control messages (one per partition each) this sink has sent so far. */
  def messagesSent: Long = 0L
}
