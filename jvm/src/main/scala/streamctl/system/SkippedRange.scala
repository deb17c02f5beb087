package streamctl.system

/**
 * Offsets `[from, until)` of an SSP that were gone from the broker (retention, deleted records)
 * when the query came to read them, and that it skipped because option `failOnDataLoss` is false.
 * Counted as records: Kafka numbers records by offset, so only compaction or transaction markers
 * could make the count an overestimate.
 */
final case class SkippedRange(ssp: SSP, from: Long, until: Long) {
  def records: Long = until - from

  def describe: String =
    s"stream '${ssp.stream}' partition ${ssp.partition}: skipped offsets $from to ${until - 1} ($records records), " +
      "which are no longer on the broker (deleted by retention?), because option 'failOnDataLoss' is false"
}
