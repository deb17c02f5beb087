package org.apache.spark.streamctl

import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend

/**
 * Marks a write builder as accepting output mode Update, writing each updated row like an appended
 * one (a streamctl sink only ever appends records to Kafka).
 *
 * Why: real-time mode (`trigger(realTime=...)`) accepts only output mode Update, and Spark admits a
 * DataSource V2 streaming sink in Update mode only when its `WriteBuilder` has this marker, which
 * lives in an internal package (Spark's own Kafka sink uses it); there is no public capability for
 * it.
 */
trait UpdateAsAppend extends SupportsStreamingUpdateAsAppend
