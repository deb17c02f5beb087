package streamctl
package ops

import java.io.{FileDescriptor, FileOutputStream, PrintStream}
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.hadoop.conf.Configuration
import org.apache.kafka.common.utils.Utils

import streamctl.{Json, StreamctlException}
import streamctl.metadata.{FileSystemMetadataStore, MetadataStore, StoreLayout}
import streamctl.startpoint.{StartpointCommands, StartpointEntry}
import streamctl.system.{KafkaParams, KafkaSystemAdmin, SSP, SystemAdmin, TaskName}

/**
 * The operator commands without Spark: a plain `java -cp streamctl.jar:<a few of pyspark's jars>
 * streamctl.ops.OpsMain <command>` answers in about a second, where a SparkSession takes ten. The
 * `streamctl` console script (Python, argparse) parses the user's arguments and hands them over as
 * one JSON object on stdin: the request carries the user's Kafka settings (passwords, JAAS
 * configs), and a process's arguments are readable by every local user (`ps`,
 * `/proc/<pid>/cmdline`), its stdin is not. The answer is JSON on stdout, an error is one line on
 * stderr and exit code 1 (2 for a bad request). stdout carries nothing else: every log line
 * (Kafka's, Hadoop's) goes to stderr, so a client's complaint can never corrupt the answer.
 *
 * Commands: `describe` ([[QueryDescription]]), `reset` ([[ResetPlan]]), `list` and `delete`
 * ([[StartpointCommands]]), `history` ([[ProgressHistory]] of every source), `transactions`
 * ([[SinkTransactions]]).
 *
 * {{{
 * echo '{"checkpoint":"/chk/q1","bootstrapServers":"127.0.0.1:9092"}' | java -cp ... streamctl.ops.OpsMain describe
 * }}}
 */
object OpsMain {

  /** How long describe and reset wait for a broker that does not answer. */
  val BrokerTimeoutMs = 5000L

  def main(args: Array[String]): Unit = {
    // Before any logger exists: a console appender made later (log4j's default one writes to
    // System.out) then writes to stderr, and only the answer reaches the real stdout.
    val answer =
      new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8)
    System.setOut(System.err)
    val code =
      try {
        if (args.length != 1)
          throw new IllegalArgumentException("usage: OpsMain <command> (the request JSON on stdin)")
        val request = new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
        val out = run(args(0), Json.parse(request, "the request"))
        answer.println(Json.write(out))
        answer.flush()
        0
      } catch {
        case e: StreamctlException => failed(answer, e.getMessage); 1
        case e: IllegalArgumentException => failed(answer, e.getMessage); 2
        case NonFatal(e) => failed(answer, s"${e.getClass.getName}: ${e.getMessage}"); 1
      }
    // Kafka and Hadoop leave non-daemon threads behind; the answer is out.
    System.exit(code)
  }

  /* The error is the answer, whole ({"error": ...}): on stderr it could not be told from a
   * library's log lines, and a message may have a line per partition at fault. */
  private def failed(answer: PrintStream, message: String): Unit = {
    System.err.println(message)
    answer.println(Json.write(Json.obj().put("error", message)))
    answer.flush()
  }

  /**
   * The command run with the Hadoop configuration the request names: Hadoop's defaults, then the
   * site files in `hadoopConfFiles` (those a Spark driver would find on its classpath), then the
   * settings in `hadoopConf` (spark-defaults.conf's `spark.hadoop.*`), as Spark layers them.
   */
  def run(command: String, req: JsonNode): JsonNode = {
    val conf = new Configuration()
    Option(req.get("hadoopConfFiles")).toSeq.flatMap(_.elements().asScala).foreach(f =>
      conf.addResource(new org.apache.hadoop.fs.Path(new java.io.File(f.asText).toURI))
    )
    Option(req.get("hadoopConf")).toSeq.flatMap(_.properties().asScala).foreach(e =>
      conf.set(e.getKey, e.getValue.asText)
    )
    run(command, req, conf)
  }

  /**
   * The command run in a process that has a Hadoop configuration already (a Spark driver's), the
   * request as JSON text; the answer as JSON text.
   */
  def answer(command: String, request: String, conf: Configuration): String =
    Json.write(run(command, Json.parse(request, "the request"), conf))

  def run(command: String, req: JsonNode, conf: Configuration): JsonNode = {
    def text(name: String): Option[String] =
      Option(req.get(name)).filterNot(_.isNull).map(_.asText).filter(_.nonEmpty)
    val checkpoint = text("checkpoint")
    val location = StoreLayout.locate(checkpoint, text("metadataStorePath")).getOrElse(
      throw StreamctlException(
        "Give the query's checkpoint (--checkpoint) or its metadata store path (--metadata-store-path)"
      )
    )
    // Kafka's tools' --command-config first, then the single options over it.
    val kafka = text("commandConfig").fold(Map.empty[String, String])(commandConfig) ++
      Option(req.get("kafkaOptions")).toSeq.flatMap(_.properties().asScala.map(e =>
        e.getKey -> e.getValue.asText
      )).toMap
    lazy val admin: Option[KafkaSystemAdmin] =
      text("bootstrapServers").orElse(kafka.get("bootstrap.servers")).map { s =>
        KafkaSystemAdmin(KafkaParams(Map(
          "default.api.timeout.ms" -> BrokerTimeoutMs.toString
        ) ++ kafka ++ Map("bootstrap.servers" -> s)))
      }
    try command match {
        case "describe" =>
          QueryDescription.describe(
            checkpoint.getOrElse(
              throw StreamctlException("describe needs the query's checkpoint (--checkpoint)")
            ),
            text("metadataStorePath"),
            admin,
            conf
          )
        case "reset" => reset(req, checkpoint, location, admin, conf)
        case "list" | "delete" =>
          /* An empty answer would hide a wrong path; a store that exists but holds no startpoint is
           * an empty answer. */
          if (!MetadataStore.open(location, conf).exists) throw StreamctlException(checkpoint.fold(
            s"No streamctl metadata store at $location: no query has run with it and no startpoint was set there. " +
              "Give the query's option 'metadata.store.path'"
          )(c =>
            s"No streamctl query at $c: it holds no metadata store ($location does not exist: no streamctl query has run there " +
              "and no startpoint was set there). Give the query's checkpointLocation"
          ))
          withCommands(location, admin, conf) { c =>
            val rows = if (command == "list") c.list()
            else {
              val topic = text("topic").getOrElse(throw StreamctlException("delete needs a topic"))
              c.delete(
                topic,
                Option(req.get("partition")).filterNot(_.isNull).map(_.asInt),
                TaskName.given(text("task").orNull, topic)
              )
            }
            startpoints(c.storeLocation(), rows)
          }
        case "history" => history(location, conf)
        case "transactions" =>
          val c = checkpoint.getOrElse(
            throw StreamctlException("transactions needs the query's checkpoint (--checkpoint)")
          )
          val a = admin.getOrElse(
            throw StreamctlException("transactions needs the Kafka cluster (--bootstrap-servers)")
          )
          def listed = SinkTransactions.list(c, text("prefix").getOrElse("streamctl"), a, conf)
          val aborted = if (Option(req.get("abort")).exists(_.asBoolean))
            SinkTransactions.abort(listed, a.params)
          else Nil
          // After an abort: the states the coordinators moved them to.
          SinkTransactions.toJson(listed, aborted)
        case other => throw new IllegalArgumentException(
            s"Unknown command '$other' (known: describe, reset, list, delete, history, transactions)"
          )
      }
    finally admin.foreach(_.close())
  }

  /** A Kafka client properties file, read as Kafka's own tools read `--command-config`. */
  /* A file that also serves Kafka's own tools may set their consumers' deserializers or
   * auto.offset.reset: streamctl's clients set those themselves, and the file is not wrong for it. */
  private def commandConfig(path: String): Map[String, String] =
    try Utils.loadProps(path).asScala.toMap -- KafkaParams.ManagedByStreamctl
    catch {
      case e: java.io.IOException =>
        throw StreamctlException(s"--command-config $path: cannot read it: ${e.getMessage}", e)
    }

  private def reset(
      req: JsonNode,
      checkpoint: Option[String],
      location: String,
      admin: => Option[SystemAdmin],
      conf: Configuration
  ): ObjectNode = {
    def text(name: String): Option[String] = Option(req.get(name)).filterNot(_.isNull).map(_.asText)
    val task = text("task").map(TaskName(_))
    val ck = checkpoint.filter(QueryCheckpoint.exists(_, conf)).map(QueryCheckpoint.read(_, conf))
    // Where the query goes on reading each SSP: the least over the tasks reading it, or the task's
    // own. A batch stopped mid-way is replayed first, so its end, not the last commit, is current.
    val current: Map[SSP, Long] =
      ck.flatMap(_.resumesAfter).toSeq.flatMap(_.sources.values).flatMap { p =>
        task.fold(p.minPositions)(t => p.tasks.getOrElse(t, Map.empty))
      }.groupMapReduce(_._1)(_._2)(math.min)
    val to: ResetPlan.To = text("to").getOrElse("") match {
      case "earliest" => ResetPlan.To.Earliest
      case "latest" => ResetPlan.To.Latest
      case "offset" => ResetPlan.To.Offset(req.get("value").asLong)
      case "datetime" => ResetPlan.To.Datetime(ResetPlan.instantMs(req.get("value").asText))
      case "duration" => ResetPlan.To.ByDuration(req.get("value").asText)
      case "shift" => ResetPlan.To.ShiftBy(req.get("value").asLong)
      case "current" => ResetPlan.To.Current
      case "offsets" => ResetPlan.To.Offsets(req.get("value").elements().asScala.map { r =>
          SSP.kafka(r.get("topic").asText, r.get("partition").asInt) -> r.get("offset").asLong
        }.toMap)
      case other => throw new IllegalArgumentException(s"Unknown reset target '$other'")
    }
    val targets: Seq[ResetPlan.Target] =
      if (req.path("allTopics").asBoolean(false)) {
        val topics = current.keys.map(_.stream).toSeq.distinct.sorted
        if (topics.isEmpty) throw StreamctlException(
          s"--all-topics: no batch in ${checkpoint.getOrElse(location)} says which topics the query reads; name them with --topic"
        )
        topics.map(ResetPlan.Target(_, None))
      } else Option(req.get("topics")).toSeq.flatMap(_.elements().asScala).map { t =>
        ResetPlan.Target(
          t.get("topic").asText,
          Option(
            t.get("partitions")
          ).filterNot(_.isNull).map(_.elements().asScala.map(_.asInt).toSeq)
        )
      }
    val steps = ResetPlan.plan(targets, to, task, current, admin)
    val execute = req.path("execute").asBoolean(false)
    // The plan resolved and checked every startpoint against the broker already: writing
    // needs no second round of broker calls per partition.
    if (execute) withCommands(location, None, conf)(c => ResetPlan.execute(steps, task, c))
    ResetPlan.json(steps, task, execute, location, ck)
  }

  private def history(location: String, conf: Configuration): ObjectNode = {
    val store = MetadataStore.open(location, conf)
    try {
      val root = Json.obj()
      root.put("store", location)
      val sources = root.putObject("sources")
      store.keys(
        StoreLayout.ProgressNamespace
      ).flatMap(StoreLayout.progressSource).distinct.sorted.foreach { id =>
        val arr = sources.putArray(id)
        new ProgressHistory(store, StoreLayout.Source(id)).load().foreach(arr.add)
      }
      if (sources.isEmpty) throw StreamctlException(
        s"No progress history in the metadata store at $location: has a streamctl query with the streamctl listener run there?"
      )
      root
    } finally store.close()
  }

  /**
   * `{"location": ..., "startpoints": [{stream, partition, task, description}]}`, what
   * `streamctl startpoints` prints.
   */
  private def startpoints(location: String, entries: Seq[StartpointEntry]): ObjectNode = {
    val root = Json.obj()
    root.put("location", location)
    val arr = root.putArray("startpoints")
    entries.foreach { e =>
      val node = arr.addObject()
      node.put("key", e.storeKey)
      node.put("stream", e.key.ssp.stream)
      node.put("partition", e.key.ssp.partition)
      e.key.task.fold(node.putNull("task"))(t => node.put("task", t.name))
      node.put("description", e.description)
    }
    root
  }

  private def withCommands[T](
      location: String,
      admin: Option[SystemAdmin],
      conf: Configuration
  )(f: StartpointCommands => T): T = {
    val commands =
      new StartpointCommands(new FileSystemMetadataStore(location, conf), admin, location)
    try f(commands)
    finally commands.close()
  }
}
