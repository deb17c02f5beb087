package streamctl.ops

import com.fasterxml.jackson.databind.JsonNode
import org.apache.hadoop.conf.Configuration

import streamctl.Json
import streamctl.system.{KafkaParams, KafkaSystemAdmin, TransactionState, TransactionalProducers}

/**
 * `streamctl transactions list|abort`: the Kafka transactions a query's transactional sink left
 * open. A query that died mid-batch leaves its writers' transactions open, and each holds back
 * every `read_committed` reader of its partitions until the broker aborts it
 * (`transaction.timeout.ms` later) or the query's next run fences it. `abort` ends them now, the
 * way the next run would: a producer of each id starts and closes
 * ([[TransactionalProducers.fence]]), which also makes any writer of the dead run still sending
 * fail instead of commit.
 *
 * A query's transactional ids are `<prefix>-<query id>-...` (docs/exactly-once.md); the query id is
 * read from its checkpoint.
 *
 * {{{
 * SinkTransactions.list("/chk/q1", "streamctl", admin, conf).filter(_.open)
 * }}}
 */
object SinkTransactions {
  def list(
      checkpoint: String,
      prefix: String,
      admin: KafkaSystemAdmin,
      conf: Configuration
  ): Seq[TransactionState] =
    admin.transactions(s"$prefix-${QueryCheckpoint.queryId(checkpoint, conf)}-")

  /** Ends the open ones among `transactions`; returns those it ended. */
  def abort(transactions: Seq[TransactionState], params: KafkaParams): Seq[TransactionState] = {
    val open = transactions.filter(_.open)
    open.foreach(t => TransactionalProducers.fence(params, t.transactionalId))
    open
  }

  def toJson(listed: Seq[TransactionState], aborted: Seq[TransactionState]): JsonNode = {
    val out = Json.obj()
    val rows = out.putArray("transactions")
    listed.foreach { t =>
      val row = rows.addObject()
      row.put("transactionalId", t.transactionalId)
      row.put("state", t.state)
      row.put("open", t.open)
      t.startedMs.foreach(ms => row.put("startedAt", java.time.Instant.ofEpochMilli(ms).toString))
      val ssps = row.putArray("partitions")
      t.ssps.foreach(s => ssps.add(s"${s.stream}:${s.partition}"))
    }
    val ended = out.putArray("aborted")
    aborted.foreach(t => ended.add(t.transactionalId))
    out
  }
}
