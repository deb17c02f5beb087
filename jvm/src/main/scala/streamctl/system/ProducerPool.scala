package streamctl.system

import org.apache.kafka.clients.producer.KafkaProducer

/**
 * Kafka producers per client settings per executor JVM, each lent to one writer at a time and kept
 * for the next writer when given back: producers are expensive to start.
 *
 * Why not one producer shared by every writer of the JVM (Spark's Kafka sink shares one): a
 * producer sends through one connection per broker, and a broker works on one request of a
 * connection at a time, so writers sharing a producer queue behind one request at a time; the
 * profile of the write path (docs/performance.md) found the shared producer's writers spending most
 * of their time waiting in the flush at commit while both cores were partly idle. One producer per
 * concurrent writer sends in parallel, and a writer's flush waits for its own records only. The
 * pool then holds, per settings, as many producers as writers ever ran at once (the executor's task
 * slots, plus the driver's control messages), each with its own `buffer.memory` (allocated as it
 * fills).
 *
 * A producer given back after a failed send is closed at once (no one else uses it), so the next
 * writer starts a fresh one. [[clear]] closes them all when the Spark application that used them
 * stops (a stopped session must not keep connections, and log each failed reconnect, until the JVM
 * exits); the JVM's shutdown closes what is left.
 *
 * {{{
 * val p = ProducerPool.acquire(params)
 * var failed = true
 * try { send(p); failed = false } finally ProducerPool.release(params, p, failed)
 * }}}
 */
object ProducerPool {
  type Producer = KafkaProducer[Array[Byte], Array[Byte]]

  /**
   * Producers not lent out, by settings; the most recently given back first (its connection is the
   * warmest).
   */
  private val idle = new java.util.HashMap[String, java.util.ArrayDeque[Producer]]()

  /** Every open producer of the pool, lent out or idle. */
  private val open = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[
    Producer,
    java.lang.Boolean
  ]())

  sys.addShutdownHook(synchronized(open.forEach(p => closeQuietly(p, 5))))

  /** A producer with `params` for the caller alone until it gives it back with [[release]]. */
  def acquire(params: KafkaParams): Producer = {
    val reused = synchronized(Option(idle.get(params.cacheKey)).map(_.pollFirst()).orNull)
    if (reused != null) reused
    else {
      /* Created outside the lock: starting a producer takes a while and must not hold up other
       * writers. */
      val created =
        params.newClient("producer")(new KafkaProducer[Array[Byte], Array[Byte]](params.producer))
      synchronized(open.add(created))
      created
    }
  }

  /**
   * Gives a producer back; `failed` closes it (the pool makes a new one for later writers), and so
   * does a [[clear]] made while it was lent out.
   */
  def release(params: KafkaParams, producer: Producer, failed: Boolean): Unit = {
    val close = synchronized {
      if (!open.contains(producer)) true
      else if (failed) { open.remove(producer); true }
      else {
        idle.computeIfAbsent(
          params.cacheKey,
          _ => new java.util.ArrayDeque[Producer]()
        ).addFirst(producer);
        false
      }
    }
    if (close) closeQuietly(producer, 0)
  }

  /**
   * Closes every idle producer and forgets the ones lent out (closed when given back); the pool
   * starts new ones for later writers. An idle producer has nothing left to send (its writer
   * flushed at commit), so it is closed without waiting.
   */
  def clear(): Unit = {
    val closing = synchronized {
      val all = new java.util.ArrayList[Producer]()
      idle.values().forEach(all.addAll(_))
      idle.clear()
      open.clear()
      all
    }
    closing.forEach(p => closeQuietly(p, 0))
  }

  /** How many producers the pool has open, lent out or idle. */
  def openCount: Int = synchronized(open.size())

  private def closeQuietly(p: Producer, seconds: Int): Unit =
    try p.close(java.time.Duration.ofSeconds(seconds))
    catch { case _: Exception => () }
}
