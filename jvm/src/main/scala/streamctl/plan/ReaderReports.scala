package streamctl.plan

import streamctl.system.{SSP, SkippedRange}

/**
 * What the readers of a source told the driver about the batches they read: where each task ran
 * (for host affinity's metrics), the records they found gone and skipped (for the data loss totals)
 * and the newest record time they read per SSP (for seconds behind). In Spark, an accumulator
 * (`spark.ReaderAccumulator`): a reader's reports arrive when its reader attempt succeeds, so the
 * driver reads a batch's reports once it has run.
 *
 * {{{
 * reports.clear()     // as a new batch is planned
 * reports.runs        // after it ran
 * }}}
 */
trait ReaderReports {
  def runs: Seq[ReaderRun]

  /**
   * Ranges readers skipped, each once (Spark reads a batch again for every action a `foreachBatch`
   * runs).
   */
  def skipped: Seq[SkippedRange]

  /** Per SSP read, the newest record timestamp (epoch ms) the readers read ([[RecordTimes]]). */
  def recordTimes: Map[SSP, Long]
  def clear(): Unit
}
