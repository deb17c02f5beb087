package streamctl.startpoint

import streamctl.StreamctlException
import streamctl.metadata.{FileSystemMetadataStore, MetadataStore, StoreLayout}
import streamctl.system.{SSP, SystemAdmin, TaskName}

/**
 * What the Python API, the CLI and SQL (`CALL streamctl.system.set_startpoint(...)`, see
 * `spark.StreamctlCatalog`) do with startpoints, in the JVM so that the stored JSON, validation and
 * resolution exist once. Arguments are plain types (a null partition means every partition, a null
 * task means the SSP-only key); results are [[StartpointEntry]]s.
 *
 * `admin` is optional: without it nothing is resolved (resolution happens when the query restarts);
 * with it, `set` first resolves what it writes, so an offset beyond the end or a partition that
 * does not exist fails now rather than at the query's next start. A custom startpoint is only
 * resolved by the query (its resolvers are the query's option).
 *
 * {{{
 * val commands = new StartpointCommands(store, Some(kafkaAdmin), "/chk/q1/streamctl")
 * commands.set("orders", Some(3), None, Startpoint.oldest())  // Seq(StartpointEntry(key, ..., offset = Some(0)))
 * commands.list()
 * commands.delete("orders", None, None)                      // every startpoint of stream orders
 * }}}
 */
class StartpointCommands(store: MetadataStore, admin: Option[SystemAdmin], location: String)
    extends AutoCloseable {
  private val manager = new StartpointManager(store)

  /**
   * Writes `startpoint` for the stream's partition (every partition when null), optionally for one
   * task.
   */
  def set(
      stream: String,
      partition: Option[Int],
      task: Option[TaskName],
      startpoint: Startpoint
  ): Seq[StartpointEntry] = setAll(Seq((stream, partition, startpoint)), task)

  /**
   * [[set]] for several (stream, partition, startpoint) at once, as `startpoints reset` asks: all
   * or nothing. Every key is made and checked, names and length, before the first is written, so a
   * bad one (a stream name with `/`, a key too long for the store) leaves the store as it was
   * rather than half reset.
   */
  def setAll(
      startpoints: Seq[(String, Option[Int], Startpoint)],
      task: Option[TaskName]
  ): Seq[StartpointEntry] = {
    val entries = startpoints.flatMap { case (stream, partition, startpoint) =>
      preview(stream, partition, task, startpoint)
    }
    entries.foreach(e => manager.checkWritable(e.key))
    store match {
      case fs: FileSystemMetadataStore => fs.ensureWritable()
      case _ =>
    }
    entries.foreach(e => e.startpoint.foreach(manager.write(e.key, _)))
    entries
  }

  /**
   * What `set` would write and, when an admin is known, where each partition would start. Writes
   * nothing.
   */
  def preview(
      stream: String,
      partition: Option[Int],
      task: Option[TaskName],
      startpoint: Startpoint
  ): Seq[StartpointEntry] = {
    if (startpoint == null) throw StreamctlException("No startpoint given")
    val keys = keysFor(stream, partition, task)
    /* A custom startpoint is resolved by the query's own resolvers (option startpoint.resolvers),
     * when it starts. */
    val resolved = startpoint match {
      case _: Startpoint.Custom => Map.empty[SSP, Resolution]
      case _ => admin.map(a =>
          new StartpointResolver(a).resolve(keys.map(_.ssp -> startpoint).toMap)
        ).getOrElse(Map.empty)
    }
    keys.map(k => StartpointEntry(k, Right(startpoint), resolved.get(k.ssp)))
  }

  /** The stored startpoint of one key. */
  def get(stream: String, partition: Int, task: Option[TaskName]): Option[Startpoint] = {
    SystemAdmin.checkPartitions(stream, Seq(partition), None, "reading a startpoint")
    manager.read(StartpointKey(SSP.kafka(stream, partition), task))
  }

  /**
   * Every stored startpoint, SSP-only and task-level. A corrupt value, or a key not in canonical
   * form (`kafka/orders/03`, which the query refuses), is listed with a null startpoint and the
   * error as its description, so that it can be seen and deleted (the query refuses to start until
   * it is).
   */
  def list(): Seq[StartpointEntry] = stored()

  /**
   * Deletes every stored startpoint of `stream` matching the filters (null: any partition, any
   * task; a task name: only that task's), corrupt ones included, under the key they are stored with
   * (`kafka/orders/03` for partition 3 too), and returns them.
   */
  def delete(
      stream: String,
      partition: Option[Int],
      task: Option[TaskName]
  ): Seq[StartpointEntry] = {
    partition.foreach(p =>
      SystemAdmin.checkPartitions(stream, Seq(p), None, "deleting startpoints")
    )
    val matching = stored().filter { e =>
      e.key.ssp.stream == stream && partition.forall(_ == e.key.ssp.partition) &&
      task.forall(e.key.task.contains)
    }
    matching.foreach(e => manager.deleteStoreKey(e.storeKey))
    matching
  }

  /** Where the metadata store is, as the user gave it. */
  def storeLocation(): String = location

  /** Closes the store and the admin (its connections). */
  override def close(): Unit =
    try store.close()
    finally admin.foreach {
        case c: AutoCloseable => c.close()
        case _ =>
      }

  private def keysFor(
      stream: String,
      partition: Option[Int],
      task: Option[TaskName]
  ): Seq[StartpointKey] = {
    if (stream == null || stream.isEmpty) throw StreamctlException("No stream given")
    val partitions = (partition, admin) match {
      case (None, Some(a)) => a.partitionsOf(stream, None, "setting a startpoint")
      case (None, None) => throw StreamctlException(
          s"Which partitions of stream '$stream'? Give a partition, or the Kafka bootstrap servers so that every partition can be listed"
        )
      case (Some(p), _) =>
        SystemAdmin.checkPartitions(admin, stream, Seq(p), "setting a startpoint")
    }
    partitions.map(p => StartpointKey(SSP.kafka(stream, p), task))
  }

  /**
   * Stored startpoints under the key each is stored with: Right when it parses, Left(the error)
   * when the value is corrupt or the key is not canonical.
   */
  private def stored(): Seq[StartpointEntry] =
    store.keys(StoreLayout.StartpointsNamespace).flatMap { k =>
      val key = StartpointKey.named(k)
      val value: Option[Either[String, Startpoint]] =
        try manager.readStoreKey(k).map { sp => // None: deleted since it was listed
            StartpointKey.parse(k) // refuses a non-canonical key, as the query does
            Right(sp)
          }
        catch { case e: StreamctlException => Some(Left(e.getMessage)) }
      value.map(StartpointEntry(key, _, None, k))
    }
}
