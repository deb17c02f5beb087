package streamctl.system

import org.apache.kafka.clients.consumer.ConsumerRecord

/**
 * What a reader fetched of one partition and did not hand on, kept in the executor's consumer pool
 * for the next reader of that partition (usually the same task's next batch, which starts where
 * this one ended). `records` is the consumer's last poll for the partition, `next` the consumer's
 * position after it: every record of the broker's from the first of `records` up to `next` is in
 * `records` (gaps are offsets the broker does not have), so a reader starting anywhere in that
 * window needs no fetch, and no seek when `positioned`: its consumer is the one that read them,
 * still at `next`. A reader on another consumer (the pool lends a task's consumer to another task
 * once it holds its most) moves it to `next`. `streamId` is the Kafka topic ID the planner knew
 * when they were read: a topic deleted and created again starts its offsets anew, so records of the
 * old one serve no reader of the new one.
 *
 * Without it a reader seeks to its start, and the seek throws away both what was fetched and the
 * fetch the consumer already sent on from there, which the next poll then has to wait for: at the
 * end of a partition that fetch waits at the broker for `fetch.max.wait.ms` (500 ms) before it
 * answers, so a batch of a few records per partition waited a few hundred ms per task.
 *
 * {{{
 * val left = Prefetched(records, next = 130L, streamId = Some("Mb6cBq3pQbeVh0l1nN1T3A"))
 * left.indexOf(120L)   // Some(i): records(i) is the first record at or after offset 120
 * left.indexOf(131L)   // None: not in the window; the reader seeks
 * }}}
 */
final case class Prefetched(
    records: java.util.List[ConsumerRecord[Array[Byte], Array[Byte]]],
    next: Long,
    streamId: Option[String] = None,
    positioned: Boolean = true
) {
  private def first: Long = if (records.isEmpty) next else records.get(0).offset()

  /**
   * Where a read from `offset` begins in `records` (`records.size()` at `next`), when `offset` is
   * in the window.
   */
  def indexOf(offset: Long): Option[Int] =
    if (offset < first || offset > next) None
    else {
      var i = 0
      while (i < records.size() && records.get(i).offset() < offset) i += 1
      Some(i)
    }
}
