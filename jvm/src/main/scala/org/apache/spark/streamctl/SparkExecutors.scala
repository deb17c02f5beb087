package org.apache.spark.streamctl

import org.apache.spark.SparkContext

/**
 * Active executors with their ids, an internal Spark API (streamctl keeps every internal API it
 * uses in this package, one file each).
 *
 * Why: a `SparkListener` registered when a query starts only hears about executors that register
 * after it, and the executors already running must be known at the first batch. Spark's public APIs
 * list them without their ids (`statusTracker.getExecutorInfos` and `getExecutorMemoryStatus` give
 * host and port only), while an executor-level preferred location needs the id. The application
 * status store (what the UI and the REST API show) has both, but `SparkContext.statusStore` is
 * `private[spark]`, hence this package.
 *
 * {{{
 * SparkExecutors.active(sc) // Seq(("driver", "10.0.0.1:41000"), ("0", "10.0.0.2:38211"))
 * }}}
 */
object SparkExecutors {

  /** (executor id, "host:port" or "host") of every active executor, the driver included. */
  def active(sc: SparkContext): Seq[(String, String)] =
    sc.statusStore.executorList(true).map(s => s.id -> s.hostPort)
}
