package org.apache.spark.streamctl

import org.apache.spark.sql.connector.catalog.Table
import org.apache.spark.sql.streaming.StreamingQuery

/**
 * The sink a streaming query writes to, an internal value.
 *
 * Why: a DataSource V2 sink hears of a query only when Spark builds its write, and Spark does that
 * while planning each batch; a query run that executes no batch (a restart with nothing new to
 * read, or one ended before its first batch) never builds it. Yet such a run must still send
 * end-of-stream downstream, so the query's in-band control has to know the sink (its stream and
 * producer options) from the moment the run starts. The query's sink table is held by its
 * `StreamExecution`, which is not public API, hence this package. Any failure to read it (a Spark
 * whose internals moved) yields None, and the sink is then known from its first batch, as before.
 *
 * {{{
 * SparkQuerySink.of(query) // Some(StreamctlTable(...)) for writeStream.format("streamctl")
 * }}}
 */
object SparkQuerySink {
  def of(query: StreamingQuery): Option[Table] =
    SparkInternals.read(SparkQueries.execution(query).map(_.sink))
}
