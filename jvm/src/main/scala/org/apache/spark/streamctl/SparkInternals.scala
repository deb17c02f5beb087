package org.apache.spark.streamctl

import scala.util.control.NonFatal

/**
 * How this package's adapters read a Spark internal: None when it cannot be read, so that callers
 * fall back to what public APIs say. A Spark whose internals moved fails in more ways than
 * `scala.util.Try` catches: a method or class gone is a `LinkageError` (`NoSuchMethodError`,
 * `NoClassDefFoundError`, `IncompatibleClassChangeError`), which `NonFatal` leaves out.
 *
 * {{{
 * SparkInternals.read(StreamExecutions.trigger(query)) // None where Spark's engine moved
 * }}}
 */
private[streamctl] object SparkInternals {
  def read[T](internal: => Option[T]): Option[T] =
    try internal
    catch { case NonFatal(_) | _: LinkageError => None }
}
