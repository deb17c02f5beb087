package streamctl.spark

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerApplicationEnd}

import streamctl.system.{ConsumerPool, ProducerPool, TransactionalProducers}

/**
 * Closes the Kafka clients streamctl keeps for reuse ([[ProducerPool]], [[TransactionalProducers]],
 * [[ConsumerPool]]) when the application that used them stops: `spark.stop()` leaves the JVM
 * running (PySpark keeps its gateway), and pooled clients would keep their connections and log
 * every failed reconnect (`WARN NetworkClient ... could not be established`) until it exits. A
 * `SparkListener` hears the application end on the driver, which in local mode is also the only
 * executor; an executor JVM of a cluster ends with the application, and the pools' JVM shutdown
 * hooks close its clients. Registered once per SparkContext by the provider, when streamctl is
 * first used.
 *
 * {{{
 * KafkaClientsShutdown.ensureRegistered(spark.sparkContext)
 * }}}
 */
object KafkaClientsShutdown {
  /* The contexts listened to: a new SparkContext in the same JVM (after a stop) gets its own
   * listener. */
  private val registered = java.util.Collections.synchronizedMap(new java.util.WeakHashMap[
    SparkContext,
    java.lang.Boolean
  ]())

  def ensureRegistered(context: SparkContext): Unit =
    if (registered.putIfAbsent(context, java.lang.Boolean.TRUE) == null)
      context.addSparkListener(new SparkListener {
        override def onApplicationEnd(end: SparkListenerApplicationEnd): Unit = closePools()
      })

  /**
   * Closes every pooled client of this JVM; the pools start new ones if streamctl is used again.
   * Not while the JVM shuts down (Spark stops its context from a shutdown hook): the pools' own
   * hooks close their clients then, and a pool first touched now could not register its hook.
   */
  def closePools(): Unit = if (!jvmShuttingDown) {
    ProducerPool.clear()
    TransactionalProducers.clear()
    ConsumerPool.clear()
  }

  // The JVM refuses new shutdown hooks once it shuts down: the public way to ask whether it does.
  private def jvmShuttingDown: Boolean = {
    val probe = new Thread(() => ())
    try {
      Runtime.getRuntime.addShutdownHook(probe); Runtime.getRuntime.removeShutdownHook(probe); false
    } catch { case _: IllegalStateException => true }
  }
}
