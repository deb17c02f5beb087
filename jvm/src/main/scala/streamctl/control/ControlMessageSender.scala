package streamctl.control

import java.util.concurrent.{ScheduledFuture, ScheduledThreadPoolExecutor, TimeUnit}

import org.apache.kafka.clients.producer.ProducerRecord
import org.slf4j.LoggerFactory

import streamctl.DaemonThreads
import streamctl.system.{KafkaParams, KafkaSystemAdmin, ProducerPool}

/**
 * Sends the control messages of one streamctl sink of a query, from the driver, to every partition
 * the sink's intermediate stream has at the moment of sending (null key, so they never disturb
 * keyed data). What to send and when is [[ProducerControl]]'s; this class asks Kafka for the
 * partition count (one metadata request per send, at most a few per batch), sends, and runs the
 * idle checks on a shared timer thread. One lock serialises batch events, idle checks and sends, so
 * an idle message never comes between an active message and the data after it. The admin client it
 * asks stays open for the run: the sink's writers ask their partition count through it too
 * ([[batchPartitionCount]]).
 *
 * The producing query is one producer (`producer.count` 1 by default, named after the query):
 * Spark's writer partitions can change from batch to batch, so they cannot serve as the fixed set
 * of producers a reader counts. Messages are sent after the batch's writers have flushed and
 * committed and before Spark commits the batch, so every control message follows the data it speaks
 * for; the active message that ends an idle spell goes out before the batch's writers start.
 *
 * {{{
 * val sender = new ControlMessageSender(kafka, "mid", () => "query-7", producerCount = 1, idleTimeoutMs = Some(60000))
 * sender.batchStarted()
 * sender.batchCommitted(wroteData = true, watermark = Some(1700000000000L))
 * sender.endOfStream(watermark = None)   // after the last one
 * sender.close()                          // the run ended
 * }}}
 */
final class ControlMessageSender(
    kafka: KafkaParams,
    val stream: String,
    producerName: () => String,
    producerCount: Int,
    idleTimeoutMs: Option[Long],
    alive: () => Boolean = () => true,
    watermarkIntervalMs: Long = ControlOptions.WatermarkInterval.default.get
) extends ControlSink {
  import ControlMessageSender._

  private val startMs = System.currentTimeMillis()
  private var admin: KafkaSystemAdmin = _
  private var closed = false
  private var nextCheck: Option[ScheduledFuture[_]] = None
  private var watermarkChecks: Option[ScheduledFuture[_]] = None
  private val sent = new java.util.concurrent.atomic.AtomicLong

  private lazy val control = new ProducerControl(
    ControlEncoder.forProducer(producerName(), producerCount),
    idleTimeoutMs,
    startMs,
    wire
  )

  private object wire extends ProducerControl.Wire {
    override def partitions(): Int = {
      if (admin == null) admin = KafkaSystemAdmin(kafka)
      admin.partitionCountOf(
        stream,
        s"at ${kafka.bootstrapServers}: control messages of producer " +
          s"'${control.messages.producer}' cannot be sent"
      )
    }

    override def send(value: Array[Byte], partitions: Range, what: String): Unit = {
      val producer = ProducerPool.acquire(kafka)
      var failed = true
      try {
        val sent = partitions.map { p =>
          p -> producer.send(new ProducerRecord[Array[Byte], Array[Byte]](
            stream,
            Integer.valueOf(p),
            null,
            value
          ))
        }
        producer.flush()
        sent.foreach { case (p, future) =>
          try future.get(kafka.deliveryTimeoutMs, TimeUnit.MILLISECONDS)
          catch {
            case e: Exception => throw kafka.sendFailed(
                s"sending $what of producer '${control.messages.producer}' to stream '$stream' partition $p",
                Option(e.getCause).getOrElse(e)
              )
          }
        }
        failed = false
        ControlMessageSender.this.sent.addAndGet(partitions.size.toLong)
      } finally ProducerPool.release(kafka, producer, failed)
    }
  }

  /** Starts the idle checks of this run (a run that writes nothing still declares itself idle). */
  override def start(): Unit = synchronized(schedule())

  override def realTime(watermark: () => Option[Long]): Unit = synchronized {
    if (watermarkChecks.isEmpty && !closed) watermarkChecks = Some(timer.scheduleWithFixedDelay(
      (() => watermarkDue(watermark)): Runnable,
      watermarkIntervalMs,
      watermarkIntervalMs,
      TimeUnit.MILLISECONDS
    ))
  }

  private def watermarkDue(watermark: () => Option[Long]): Unit = synchronized {
    if (!closed) {
      if (!alive()) close()
      else
        try control.watermarkDue(watermark())
        catch {
          case e: Exception =>
            log.warn(s"Sending the watermark of producer '$producer' on stream '$stream' failed " +
              s"(retried at the next interval): ${e.getMessage}")
        }
    }
  }

  override def batchStarted(): Unit = synchronized {
    cancelCheck()
    control.batchStarted()
  }

  override def batchPartitionCount(): Int = synchronized(control.batchPartitionCount())

  override def batchCommitted(wroteData: Boolean, watermark: Option[Long]): Unit = synchronized {
    try control.batchCommitted(
        System.currentTimeMillis(),
        wroteData,
        watermark,
        realTime = watermarkChecks.isDefined
      )
    finally schedule()
  }

  override def batchAborted(): Unit = synchronized {
    control.batchAborted()
    schedule()
  }

  override def endOfStream(watermark: Option[Long]): Unit = synchronized {
    cancelCheck()
    watermarkChecks.foreach(_.cancel(false))
    watermarkChecks = None
    control.endOfStream(watermark)
    closed = true // nothing more to say after end-of-stream, and no idle check either
  }

  override def runFinished(): Unit = synchronized {
    cancelCheck()
    control.runFinished(System.currentTimeMillis())
    closed = true
  }

  override def producer: String = control.messages.producer

  override def messagesSent: Long = sent.get

  override def target: (String, String) = (kafka.bootstrapServers, stream)

  override def close(): Unit = synchronized {
    closed = true
    cancelCheck()
    watermarkChecks.foreach(_.cancel(false))
    watermarkChecks = None
    if (admin != null) {
      admin.close()
      admin = null
    }
  }

  private def check(): Unit = synchronized {
    nextCheck = None
    if (!closed) {
      if (!alive()) close()
      else
        try {
          control.tick(System.currentTimeMillis())
          schedule()
        } catch {
          case e: Exception =>
            log.warn(
              s"Idle check of producer '$producer' on stream '$stream' failed (retried): ${e.getMessage}"
            )
            schedule(retry = true)
        }
    }
  }

  private def schedule(retry: Boolean = false): Unit = {
    cancelCheck()
    if (!closed) control.nextCheckMs.foreach { at =>
      val delay = if (retry) math.min(idleTimeoutMs.getOrElse(RetryMs), RetryMs)
      else math.max(0L, at - System.currentTimeMillis())
      nextCheck = Some(timer.schedule((() => check()): Runnable, delay, TimeUnit.MILLISECONDS))
    }
  }

  private def cancelCheck(): Unit = {
    nextCheck.foreach(_.cancel(false))
    nextCheck = None
  }

  override def toString: String = s"ControlMessageSender($stream, ${control.messages})"
}

object ControlMessageSender {
  private val log = LoggerFactory.getLogger(classOf[ControlMessageSender])
  private val RetryMs = 10000L

  // One daemon thread for every query's idle and watermark checks: an idle check is a metadata
  // request and at most one send, and rare (one per idle timeout per producer); a watermark
  // check reads the readers' recorded states and sends only when the watermark advanced.
  private lazy val timer: ScheduledThreadPoolExecutor = {
    val executor =
      new ScheduledThreadPoolExecutor(1, DaemonThreads.named("streamctl-control-timer"))
    executor.setRemoveOnCancelPolicy(true)
    executor
  }
}
