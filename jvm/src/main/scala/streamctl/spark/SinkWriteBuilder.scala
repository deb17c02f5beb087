package streamctl
package spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}
import org.apache.spark.sql.types._
import org.apache.spark.streamctl.{QueryTrigger, SparkQueries, UpdateAsAppend}

import streamctl.StreamctlException
import streamctl.control.SinkOptions
import streamctl.system.{KafkaSystemAdmin, LastWriters, TransactionalIds}

/**
 * The streaming write of `writeStream.format("streamctl")` (batch writes: [[BatchWriter]]). Plain
 * records are delivered at least once, as with Spark's Kafka sink (a batch retried after a failure
 * may write some records twice), unless option `transactional=true`; an intermediate stream is
 * written in transactions unless that option is false or the query runs in real-time mode
 * ([[SinkOptions.transactional]]). With `intermediate=true` the query also sends its control
 * messages (watermarks, end-of-stream) to the stream it writes; a plain sink sends none. Output
 * modes Append and Update (real-time mode's) both just append records.
 */
final class SinkWriteBuilder(info: LogicalWriteInfo) extends WriteBuilder with UpdateAsAppend {
  private val raw = info.options().asCaseSensitiveMap().asScala.toMap
  private val prepared = SinkWrite.prepare(raw, info.schema())

  override def build(): Write = new Write {
    override def supportedCustomMetrics(): Array[CustomMetric] =
      SqlMetrics.write(prepared.options.intermediate)

    // Control messages of the query go out from the driver, through its control.RunControl: an
    // active message before the writers start (after an idle spell), watermarks and end-of-stream
    // after the writers committed. Only an intermediate stream carries them.
    override def toStreaming: StreamingWrite = new StreamingWrite {
      prepared.checkTopic()
      private val transactions =
        prepared.queryTransactions().map(ids => ids.copy(lastWriters = LastWriters.of(ids.key)))
      private val query =
        if (prepared.options.intermediate) QueryControlRegistry.current().map(_.run) else None
      private val sink = query.flatMap(_.addSinkFor(prepared.options))
      // Spark builds this write at every batch: what the sink had sent when the batch began.
      private var sentBefore = 0L
      override def createStreamingWriterFactory(info: PhysicalWriteInfo)
          : StreamingDataWriterFactory = {
        sentBefore = sink.fold(0L)(_.messagesSent)
        query.foreach(_.batchStarted(QueryLookup.currentBatchId.getOrElse(-1L)))
        // The writers write the partitions the query's control messages of this batch go to, asked
        // over the sink's open connection: Spark builds this write at every batch.
        sink.fold(prepared.factory(transactions))(s =>
          prepared.factory(s.batchPartitionCount(), transactions)
        )
      }
      // Spark's commit coordinator lets one attempt per partition commit, which matters for a sink
      // whose commit publishes output; here a writer's records are sent as it writes (at least
      // once, as Spark's Kafka sink) and its commit only flushes them; a transactional writer's
      // commit publishes them, but the newest attempt fences older ones and an attempt of a
      // committed batch writes nothing (TransactionalProducers). Without the coordinator, a
      // Spark task attempt killed by a query's stop ends quietly (SinkDataWriter.writeAll) instead
      // of being refused a commit, which Spark logs as an ERROR; Spark drops a killed attempt's
      // answer anyway.
      override def useCommitCoordinator(): Boolean = false
      override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit = {
        // Spark hands the writer partitions' messages in their order.
        transactions.foreach(ids =>
          LastWriters.committed(
            ids.key,
            messages.iterator.zipWithIndex.collect {
              case (SinkCommitMessage(_, Some(writer)), p) => p -> writer
            }.toMap
          )
        )
        query.foreach(_.batchCommitted(
          epochId,
          wroteData = messages.exists {
            case m: SinkCommitMessage => m.records > 0
            case _ => false
          }
        ))
        // Sent here on the driver, after the writers: no task attempt can report them.
        sink.foreach(s =>
          QueryLookup.current.foreach(q =>
            SparkQueries.postWriteMetric(
              q,
              epochId,
              SqlMetrics.ControlMessagesSent,
              s.messagesSent - sentBefore
            )
          )
        )
      }
      override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
        query.foreach(_.batchAborted(epochId))
    }
  }
}

/** A write's checked options and input columns, streaming or batch. */
final case class SinkWrite(options: SinkOptions, layout: RowLayout) {

  /**
   * The writers' factory; an intermediate stream's partition count is asked for here, on the
   * driver, with an admin client of its own (a batch write, or a streaming one outside a query's
   * control).
   */
  def factory(transactions: Option[TransactionalIds]): SinkWriterFactory = factory(
    {
      val admin = KafkaSystemAdmin(options.kafka)
      try admin.partitionCountOf(options.stream, s"option '${options.topicOption}' of the sink")
      finally admin.close()
    },
    transactions
  )

  /**
   * A transactional streaming write's ids, derived from the query's id (kept in its checkpoint: a
   * restarted query fences its previous run's writers), checked once per run against the query's
   * trigger and the broker. None for an at-least-once write: option `transactional=false`, a plain
   * sink without it, or an intermediate stream of a real-time query without it.
   */
  def queryTransactions(): Option[TransactionalIds] =
    // Not transactional outside real-time mode: not in it either, and no query id is needed.
    if (!options.transactional(realTime = false)) None
    else {
      val queryId = QueryLookup.currentQueryId.getOrElse(throw new IllegalStateException(
        "A streaming write outside a query's thread: Spark sets the query id there"
      ))
      val query = QueryLookup.find(queryId)
      val trigger = query.flatMap(SparkQueries.trigger)
      Option.when(options.transactional(realTime =
        trigger.exists(_.isInstanceOf[QueryTrigger.RealTime])
      )) {
        /* Once per run, not per query: a restart from the same checkpoint keeps the query id but
         * may change the trigger or the timeout, and a refused run must be refused again. Braces
         * around queryId: Scala 2.12 decodes unicode escapes before it reads names. */
        val run = s"${queryId}\u0001${query.fold("")(_.runId.toString)}\u0001transactions"
        if (!SinkWrite.checked.contains(run)) {
          checkTransactions(trigger)
          SinkWrite.checked.add(run)
        }
        TransactionalIds(options.transactionalIdPrefix, queryId, sinkName)
      }
    }

  /**
   * A transactional batch write's ids: its own, so that retried attempts of its Spark tasks fence
   * each other, and no later write uses them (its producers close as its writers end).
   */
  def writeTransactions(): Option[TransactionalIds] =
    Option.when(options.transactional(realTime = false)) {
      TransactionalIds(
        options.transactionalIdPrefix,
        java.util.UUID.randomUUID().toString,
        sinkName,
        lasting = false
      )
    }

  private def sinkName: String = options.topic.getOrElse("rows")

  /**
   * A transaction that the broker ends before its batch commits loses nothing (the batch fails and
   * runs again) but never succeeds either: a transaction lasts up to a batch, so
   * `transaction.timeout.ms` must exceed the trigger interval and stay within the broker's
   * `transaction.max.timeout.ms`. Real-time mode writes records as they come for a whole long
   * batch, which one transaction would hide from `read_committed` readers until the batch ends.
   */
  private def checkTransactions(trigger: Option[QueryTrigger]): Unit = {
    val transactional = SinkOptions.Transactional.name
    val timeoutMs = options.kafka.transactionTimeoutMs
    trigger match {
      case Some(QueryTrigger.RealTime(_)) => throw StreamctlException(
          s"Option '$transactional=true' is not supported in real-time mode (trigger(realTime=...)): a real-time batch writes " +
            "its records as they come, for the whole batch, and one transaction per batch would hide them from read_committed " +
            s"readers until it ends; use a processing-time trigger for exactly-once writes, or '$transactional=false'"
        )
      case Some(QueryTrigger.Every(intervalMs)) if intervalMs >= timeoutMs =>
        val max = brokerMaxTimeout().fold("")(m =>
          s"; the broker allows at most $m ms (transaction.max.timeout.ms)"
        )
        // An intermediate stream's writes are transactional unless asked otherwise: say so.
        val byDefault =
          if (options.transactionalSet.isDefined) ""
          else
            s"; an intermediate stream's writes are transactional by default, '$transactional=false' writes at least once"
        throw StreamctlException(s"Option 'kafka.transaction.timeout.ms' ($timeoutMs ms${
            if (options.kafka.user.contains("transaction.timeout.ms")) "" else ", Kafka's default"
          }) must be longer than " +
          s"the trigger interval ($intervalMs ms): a transaction lasts up to a batch, and the broker would abort it before " +
          s"the batch commits$max$byDefault")
      case _ =>
    }
    brokerMaxTimeout().filter(_ < timeoutMs).foreach { max =>
      throw StreamctlException(
        s"Option 'kafka.transaction.timeout.ms' ($timeoutMs ms) is longer than the broker allows " +
          s"($max ms, its transaction.max.timeout.ms): Kafka would refuse the sink's transactions"
      )
    }
  }

  private def brokerMaxTimeout(): Option[Long] = {
    val admin = KafkaSystemAdmin(options.kafka)
    try admin.brokerSetting("transaction.max.timeout.ms").flatMap(_.trim.toLongOption)
    finally admin.close()
  }

  /**
   * On the driver, before any writer starts: the topic of option `topic` must exist (or the broker
   * creates it), or every writer would wait `max.block.ms` for it and then say the broker did not
   * answer. Rows naming their topic in a `topic` column are checked at their first failed send.
   *
   * Only the writers need Kafka, as with Spark's sink: a driver that cannot reach the broker (a
   * client-mode driver outside its network), or cannot make a client at all (a truststore shipped
   * to the executors with `--files`), leaves the check to them, with a warning, within 10 s at
   * most.
   */
  def checkTopic(): Unit = options.topic.foreach { t =>
    // Spark builds the streaming write at every batch: a topic found once is not asked about again.
    val key = options.kafka.cacheKey + "\u0001" + t
    if (!SinkWrite.checked.contains(key)) {
      val params = options.kafka.copy(user =
        options.kafka.user + ("default.api.timeout.ms" -> math.min(
          options.kafka.apiTimeoutMs,
          SinkWrite.CheckTimeoutMs
        ).toString)
      )
      val unknown: Option[String] =
        (try Right(KafkaSystemAdmin(params))
        catch { case e: StreamctlException => Left(e.getMessage) }) match {
          case Left(why) => Some(why)
          case Right(admin) =>
            try admin.checkWritable(t, s"option '${options.topicOption}' of the sink")
            finally admin.close()
        }
      unknown match {
        case None => SinkWrite.checked.add(key)
        case Some(why) => SinkWrite.log.warn(
            s"The driver could not check that topic '$t' (option '${options.topicOption}' of the sink) exists: " +
              s"$why. The writers will find out"
          )
      }
    }
  }

  /**
   * The writers' factory, given how to ask the intermediate stream's partition count (not asked for
   * a plain sink).
   */
  def factory(partitionCount: => Int, transactions: Option[TransactionalIds]): SinkWriterFactory =
    SinkWriterFactory(
      options.kafka,
      options.topic,
      options.topicOption,
      options.intermediate,
      if (options.intermediate) partitionCount else 0,
      layout,
      transactions
    )
}

object SinkWrite {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[SinkWrite])
  // The longest the driver waits on Kafka to check a sink's topic, which the writers check again.
  private val CheckTimeoutMs = 10000L
  // (Kafka settings, topic) of the sink topics this driver found writable, and the runs of
  // transactional queries whose settings passed the check.
  private val checked = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  def prepare(raw: Map[String, String], schema: StructType): SinkWrite = {
    val options = SinkOptions(raw)
    SinkWrite(options, RowLayout(schema, options))
  }
}

/**
 * Where the sink's columns are in the input rows, checked once on the driver, as Spark's Kafka sink
 * checks them: `value` (string or binary) is required; `key` (string or binary), `topic` (string;
 * required without option `topic`, not looked at with it), `partition` (int) and `headers`
 * (array<struct<key:string,value:binary>>) are optional; other columns are ignored. Names match
 * exactly, as Spark's: a `KEY` or `Partition` column is a column of the user's own, not the
 * record's key or partition.
 */
final case class RowLayout(
    key: Int,
    keyIsString: Boolean,
    value: Int,
    valueIsString: Boolean,
    partition: Int,
    topic: Int,
    headers: Int
)

object RowLayout {
  private val HeadersType = ArrayType(SourceSchema.HeaderType)

  def apply(schema: StructType, options: SinkOptions): RowLayout = {
    val target = options.topic.fold("Kafka")(t => s"topic '$t'")
    def find(
        name: String,
        allowed: Seq[DataType],
        required: Boolean,
        why: String = ""
    ): (Int, Boolean) =
      schema.fields.indexWhere(_.name == name) match {
        case -1 if required =>
          throw StreamctlException(
            s"Writing to $target needs a '$name' column$why; the input has ${schema.fieldNames.mkString(", ")}"
          )
        case -1 => (-1, false)
        case i =>
          val t = schema.fields(i).dataType
          if (!allowed.exists(a => DataType.equalsIgnoreNullability(a, t)))
            throw StreamctlException(
              s"Column '$name' written to $target must be ${allowed.map(_.simpleString).mkString(" or ")}, not ${t.simpleString}"
            )
          (i, t == StringType)
      }
    val (k, ks) = find("key", Seq(BinaryType, StringType), required = false)
    val (v, vs) = find("value", Seq(BinaryType, StringType), required = true)
    val (p, _) = find("partition", Seq(IntegerType), required = false)
    val t =
      if (options.topic.isDefined) -1
      else find("topic", Seq(StringType), required = true, " (or option 'topic')")._1
    val (h, _) = find("headers", Seq(HeadersType), required = false)
    RowLayout(k, ks, v, vs, p, t, h)
  }
}
