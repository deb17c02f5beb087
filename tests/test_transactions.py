"""Exactly once from Kafka to Kafka: the transactional sink and read_committed readers (docs/exactly-once.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery

import streamctl
from streamctl import StreamctlException, options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm

from conftest import (
    committed_batches,
    read_committed_numbers,
    read_committed_values,
    run_available_now,
    run_job_until,
)


def _values(spark, servers: str, stream: str, isolation: str) -> list[str]:
    """Every value of ``stream`` as a reader with this ``isolation.level`` sees it (a batch read)."""
    df = (
        spark.read.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", kafka={"isolation.level": isolation}))
        .load()
    )
    return sorted(bytes(r.value).decode() for r in df.select("value").collect())


def _copy(spark, servers: str, source: str, out: str, checkpoint: Path, **sink: object) -> None:
    """Copies ``source`` to ``out`` in 50-record batches until caught up (AvailableNow)."""
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [source], starting_offsets="earliest", max_records_per_batch=50))
        .load()
    )
    q = (
        df.select("key", "value")
        .writeStream.format("streamctl")
        .options(**options.sink(servers, out, **sink))  # type: ignore[arg-type]
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    assert q.awaitTermination(180), "the AvailableNow run did not finish"
    assert q.exception() is None


def _forget_last_batch(checkpoint: Path) -> int:
    """What a driver that died after its writers committed, before Spark recorded the batch, leaves:
    the batch's offsets without its commit. The next run of the query runs that batch again."""
    commits = checkpoint / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)
    return last


def _copy_with_a_batch_run_again(spark, servers: str, make_stream, checkpoint: Path, n: int, **sink: object) -> str:
    """Copies ``n`` numbers from a new 2-partition stream into another with ``sink``'s options, then
    runs the last batch again as a driver that died before its commit would; returns the copy."""
    source, out = make_stream(partitions=2), make_stream(partitions=2)
    kafka.produce(spark, servers, source, [str(i).encode() for i in range(n)], partitions=[i % 2 for i in range(n)])
    _copy(spark, servers, source, out, checkpoint, **sink)
    last = _forget_last_batch(checkpoint)
    assert last >= 1
    _copy(spark, servers, source, out, checkpoint, **sink)
    assert (checkpoint / "commits" / str(last)).exists(), "the second run ran the forgotten batch again"
    return out


@pytest.mark.parametrize("transactional", [True, False], ids=["transactional", "plain"])
def test_a_batch_run_again_after_a_crash_is_not_written_twice(spark, servers, make_stream, tmp_path, transactional):
    n = 200
    sink = {"transactional": True} if transactional else {}
    out = _copy_with_a_batch_run_again(spark, servers, make_stream, tmp_path / "cp", n, **sink)

    committed = _values(spark, servers, out, "read_committed")
    if transactional:
        assert committed == sorted(str(i) for i in range(n))
    else:
        # The plain sink writes the batch that ran again a second time: what the transactional one prevents.
        assert len(committed) > n and set(committed) == {str(i) for i in range(n)}


def test_a_checkpoint_older_than_what_its_transactional_sink_committed_is_refused(
    spark, servers, make_stream, tmp_path
):
    """Batches deleted from a checkpoint (or a copy restored) are planned anew under batch ids the
    sink committed already: skipped as "written", their records would be lost. The writers refuse."""
    n = 200
    source, out = make_stream(partitions=2), make_stream(partitions=2)
    kafka.produce(spark, servers, source, [str(i).encode() for i in range(n)], partitions=[i % 2 for i in range(n)])
    checkpoint = tmp_path / "cp"
    _copy(spark, servers, source, out, checkpoint, transactional=True)
    assert committed_batches(checkpoint) == 4
    # Every batch forgotten, the query's id kept (in its metadata): Spark plans from batch 0 again.
    for log in ("offsets", "commits"):
        for f in (checkpoint / log).iterdir():
            f.unlink()
    with pytest.raises(StreamingQueryException) as refused:
        _copy(spark, servers, source, out, checkpoint, transactional=True)
    message = str(refused.value)
    assert "committed batch 3 of this query, which is now writing batch 0" in message, message
    assert "its checkpoint is older than its output" in message, message
    assert _values(spark, servers, out, "read_committed") == sorted(str(i) for i in range(n))


@pytest.mark.parametrize("transactional", [None, False], ids=["by-default", "transactional=false"])
def test_an_intermediate_stream_is_written_exactly_once_unless_asked_otherwise(
    spark, servers, make_stream, tmp_path, transactional
):
    """Without option transactional, an intermediate stream's writes are transactional: a batch
    run again after a crash is not written twice for a read_committed reader."""
    n = 200
    sink = {"intermediate": True, "transactional": transactional}
    mid = _copy_with_a_batch_run_again(spark, servers, make_stream, tmp_path / "cp", n, **sink)

    committed = read_committed_numbers(spark, servers, mid, 2)
    if transactional is None:
        assert committed == list(range(n))
        assert kafka.transaction_coordinators(spark, servers, mid), f"no transactional writer of {mid}"
    else:
        assert len(committed) > n and set(committed) == set(range(n))


def test_a_newer_writer_of_the_same_transactional_id_fences_the_older_one(spark, servers, make_stream):
    """A speculative or retried attempt of a Spark task (or a restarted query) starts a producer with
    the same transactional id as the attempt still running: the older one's records never commit."""
    out = make_stream()
    j = jvm(spark)
    params = j.streamctl.testing.KafkaTools.kafkaParams(servers)
    producers = j.streamctl.system.TransactionalProducers
    record = j.org.apache.kafka.clients.producer.ProducerRecord
    tid = f"streamctl-test-{out}-0"

    older = producers.acquire(params, tid)
    assert older.committedBatch() == -1
    older.begin(7, out)
    older.producer().send(record(out, b"older"))
    older.producer().flush()
    newer = producers.acquire(params, tid)  # the older one is lent out: a producer of its own, which fences it
    newer.begin(7, out)
    newer.producer().send(record(out, b"newer"))
    newer.producer().flush()
    newer.commit(7)
    with pytest.raises(StreamctlException, match="a newer writer of the same id started"):
        older.commit(7)
    producers.release(newer, False)
    # What the writer's abort() and close() do after the failed commit: the fenced producer, which
    # could never begin another transaction, is closed rather than lent to the id's next batch.
    older.abortQuietly()
    assert not older.reusable()
    producers.release(older, False)
    reused = producers.acquire(params, tid)
    try:
        assert reused.committedBatch() == 7  # the newer one's lease
        reused.begin(8, out)
        reused.abortQuietly()
        assert reused.reusable()
    finally:
        producers.release(reused, False)

    # A producer started later (the next attempt, on any executor) reads which batch the id committed.
    producers.clear()
    later = producers.acquire(params, tid)
    try:
        assert later.committedBatch() == 7
    finally:
        producers.release(later, False)
    assert _values(spark, servers, out, "read_committed") == ["newer"]
    assert _values(spark, servers, out, "read_uncommitted") == ["newer", "older"]


def test_a_retried_task_attempt_leaves_no_record_for_read_committed_readers(servers, make_stream, tmp_path, spark):
    """The first attempt of a Spark task fails after its writer sent records; its transaction is
    aborted and the retried attempt writes every record once (a job of its own: local mode retries
    a task only with a maxFailures of its own, local[2,3])."""
    source, out = make_stream(partitions=2), make_stream(partitions=2)
    n = 600
    kafka.produce(spark, servers, source, [str(i).encode() for i in range(n)], partitions=[i % 2 for i in range(n)])
    script = Path(__file__).with_name("_transactional_job.py")
    job = subprocess.run(
        [sys.executable, str(script), servers, source, out, str(tmp_path / "cp")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert job.returncode == 0, job.stderr[-3000:]
    assert re.search(r"^attempts failed once: 1$", job.stdout, re.M), job.stdout
    assert re.search(r"^failed once the broker held its records: True$", job.stdout, re.M), job.stdout
    assert _values(spark, servers, out, "read_committed") == sorted(str(i) for i in range(n))
    # The failed attempt's records are in the log, aborted: a read_uncommitted reader sees them twice.
    assert len(_values(spark, servers, out, "read_uncommitted")) > n


@pytest.mark.parametrize(
    "sink", [{"transactional": True}, {"intermediate": True}], ids=["transactional", "intermediate-by-default"]
)
def test_a_trigger_interval_longer_than_the_transaction_timeout_fails_at_start(
    spark, servers, make_stream, tmp_path, sink
):
    source, out = make_stream(), make_stream()
    df = spark.readStream.format("streamctl").options(**options.source(servers, [source])).load()
    # Started again from the same checkpoint (the same query id, as a notebook cell run twice), it
    # is refused again: the check is made once per run, not once per query.
    for _run in range(2):
        q = (
            df.select("value")
            .writeStream.format("streamctl")
            .options(**options.sink(servers, out, **sink, kafka={"transaction.timeout.ms": "30000"}))
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(processingTime="2 minutes")
            .start()
        )
        with pytest.raises(StreamingQueryException) as failed:
            q.awaitTermination(120)
        message = str(failed.value)
        assert "Option 'kafka.transaction.timeout.ms' (30000 ms)" in message
        assert "trigger interval (120000 ms)" in message
        assert "transaction.max.timeout.ms" in message  # the embedded broker lets its settings be read
        # A query that never asked for transactions learns why it has them and how to do without.
        by_default = "an intermediate stream's writes are transactional by default, 'transactional=false'"
        assert (by_default in message) == ("intermediate" in sink), message


@pytest.mark.parametrize(
    ("sink", "message"),
    [
        ({"transactionalIdPrefix": "etl"}, "Option 'transactionalIdPrefix' names the transactional ids"),
        (
            {"transactional": "true", "kafka.transactional.id": "mine"},
            "Option 'kafka.transactional.id' is not supported",
        ),
    ],
)
def test_transaction_options_that_cannot_work_are_refused(spark, servers, make_stream, sink, message):
    out = make_stream()
    with pytest.raises(StreamctlException, match=message):
        spark.range(3).selectExpr("CAST(id AS STRING) AS value").write.format("streamctl").options(
            **options.sink(servers, out)
        ).options(**sink).save()


def test_a_transactional_batch_write_is_read_by_read_committed_readers(spark, servers, make_stream):
    out = make_stream(partitions=3)
    spark.range(100).selectExpr("CAST(id AS STRING) AS value").repartition(4).write.format("streamctl").options(
        **options.sink(servers, out, transactional=True)
    ).save()
    assert _values(spark, servers, out, "read_committed") == sorted(str(i) for i in range(100))
    # No later write uses this write's transactional ids: their producers (one network thread each)
    # close with its writers instead of idling in the executor for minutes.
    threads = jvm(spark).java.lang.Thread
    deadline = time.monotonic() + 60
    while open_ := [n for n in (t.getName() for t in threads.getAllStackTraces().keySet()) if f"-{out}-" in n]:
        assert time.monotonic() < deadline, f"producers of the finished write still open: {open_}"
        time.sleep(0.2)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed ``streamctl`` console script, as an operator runs it."""
    command = Path(sys.executable).with_name("streamctl")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.run([str(command), *args], capture_output=True, text=True, timeout=120, env=env, check=False)


def test_the_open_transaction_a_dead_run_left_is_listed_and_aborted(spark, servers, make_stream, tmp_path):
    source, out = make_stream(), make_stream()
    kafka.produce(spark, servers, source, [b"1", b"2"])
    checkpoint = tmp_path / "cp"
    _copy(spark, servers, source, out, checkpoint, transactional=True)
    query_id = json.loads((checkpoint / "metadata").read_text())["id"]
    tid = f"streamctl-{query_id}-{out}-0"

    # What a run killed mid-batch leaves: writer partition 0's transaction, begun and never ended.
    j = jvm(spark)
    producers = j.streamctl.system.TransactionalProducers
    # Its transaction outlives the test: on a loaded machine the two CLI runs below can take longer
    # than Kafka's 60 s default, after which the broker aborts the transaction itself.
    params = j.streamctl.testing.KafkaTools.kafkaParams(servers, "transaction.timeout.ms", "600000")
    dead = producers.acquire(params, tid)
    try:
        dead.begin(0, out)
        dead.producer().send(j.org.apache.kafka.clients.producer.ProducerRecord(out, b"uncommitted"))
        dead.producer().flush()
        # A broker on a loaded CI machine can take longer than the CLI's 5 s default to answer.
        ask = ["--checkpoint", str(checkpoint), "--bootstrap-servers", servers, "--output", "json"]
        ask += ["--kafka-option", "default.api.timeout.ms=60000"]

        listed = _cli("transactions", "list", *ask)
        assert listed.returncode == 0, listed.stderr
        open_ones = [t for t in json.loads(listed.stdout)["transactions"] if t["open"]]
        described = [(t["transactionalId"], t["state"], t["partitions"]) for t in open_ones]
        # The batch's marker (its group offset) goes out as the transaction begins, so the group's
        # partition of __consumer_offsets is in it too.
        marker = [p for p in described[0][2] if p.startswith("__consumer_offsets:")]
        assert len(marker) == 1
        assert described == [(tid, "Ongoing", sorted([*marker, f"{out}:0"]))]

        aborted = _cli("transactions", "abort", *ask)
        assert aborted.returncode == 0, aborted.stderr
        answer = json.loads(aborted.stdout)
        assert answer["aborted"] == [tid]
        assert not [t for t in answer["transactions"] if t["open"]]
        with pytest.raises(StreamctlException, match="a newer writer of the same id started"):
            dead.commit(0)
    finally:
        producers.release(dead, True)
    assert _values(spark, servers, out, "read_committed") == ["1", "2"]
    table = _cli("transactions", "list", "--checkpoint", str(checkpoint), "--bootstrap-servers", servers)
    assert table.returncode == 0, table.stderr
    # Ended: the fencing producer aborted it and left the id with nothing open.
    assert tid in table.stdout and "Ongoing" not in table.stdout, table.stdout


def test_a_transaction_released_on_an_interrupted_thread_is_still_aborted(spark, servers, make_stream):
    """A Spark task attempt killed as its query stops ends on an interrupted thread (Kafka's clients
    set the interrupt again as they throw), where every wait of the producer's throws at once: its
    open transaction must still be aborted, or read_committed readers of the stream stop at it
    until the broker ends it (transaction.timeout.ms, 10 minutes here)."""
    out = make_stream()
    j = jvm(spark)
    producers, thread = j.streamctl.system.TransactionalProducers, j.java.lang.Thread
    params = j.streamctl.testing.KafkaTools.kafkaParams(servers, "transaction.timeout.ms", "600000")
    lease = producers.acquire(params, f"streamctl-stopped-{out}-0")
    lease.begin(0, out)
    lease.producer().send(j.org.apache.kafka.clients.producer.ProducerRecord(out, b"uncommitted"))
    lease.producer().flush()
    # PySpark runs a Python thread's calls on one JVM thread: the release below runs interrupted.
    thread.currentThread().interrupt()
    try:
        producers.release(lease, False, False)
        assert thread.interrupted(), "the interrupt is the killed attempt's: it stays set"
    finally:
        thread.interrupted()
    kafka.produce(spark, servers, out, [b"after"])
    assert _values(spark, servers, out, "read_committed") == ["after"]


@pytest.mark.parametrize("transactional", [True, False], ids=["transactional", "plain"])
def test_a_query_restarted_while_its_dead_run_has_a_transaction_open_writes_the_batch_once(
    spark, servers, make_stream, tmp_path, transactional
):
    """A run is SIGKILLed mid-batch: writer partition 1 committed, writer partition 0 has sent half
    its rows in a transaction still open. The restarted query runs the batch again: writer 0's
    new producer fences the dead one and aborts its transaction, then writes its rows once;
    writer 1 finds its batch committed and writes nothing. The plain sink repeats both."""
    source, out = make_stream(partitions=2), make_stream(partitions=2)
    n = 600
    kafka.produce(spark, servers, source, [str(i).encode() for i in range(n)], partitions=[i % 2 for i in range(n)])
    checkpoint = tmp_path / "cp"
    sink = {"transactional": True} if transactional else {}

    def sent_before_the_stall() -> bool:  # partition 1's rows and partition 0's first half
        return sum(len(kafka.read_raw(spark, servers, out, p)) for p in range(2)) >= n // 2 + n // 4

    run_job_until(
        "_task_attempt_job.py",
        ["stall", servers, source, out, str(checkpoint), "transactional" if transactional else "plain"],
        sent_before_the_stall,
        timeout=240,
        died="the run to kill ended by itself",
        stuck="the run to kill did not write its rows",
        log=tmp_path / "job.log",
    )
    ask = ["--checkpoint", str(checkpoint), "--bootstrap-servers", servers, "--output", "json"]
    if transactional:
        query_id = json.loads((checkpoint / "metadata").read_text())["id"]
        listed = _cli("transactions", "list", *ask)
        assert listed.returncode == 0, listed.stderr
        open_ones = [t["transactionalId"] for t in json.loads(listed.stdout)["transactions"] if t["open"]]
        assert open_ones == [f"streamctl-{query_id}-{out}-0"]

    _copy(spark, servers, source, out, checkpoint, **sink)

    committed = read_committed_values(spark, servers, out, 2)
    if transactional:
        assert committed == sorted(str(i) for i in range(n))
        # The dead run's half of partition 0 is in the log, aborted.
        assert sum(len(kafka.read_raw(spark, servers, out, p)) for p in range(2)) == n + n // 4
        listed = _cli("transactions", "list", *ask)
        assert listed.returncode == 0, listed.stderr
        assert not [t for t in json.loads(listed.stdout)["transactions"] if t["open"]]
    else:
        assert len(committed) == 2 * n - n // 4 and set(committed) == {str(i) for i in range(n)}


def test_a_read_committed_source_passes_aborted_transactions_and_markers_at_the_end(
    spark, servers, make_stream, tmp_path
):
    """Partition 0 ends with an aborted transaction (its marker last), partition 1 with a
    committed one after an aborted one. A read_committed source reads exactly the committed
    records, AvailableNow stops, a processing-time query catches up, and both stand 0 behind:
    their positions are past the markers (FLINK-33484's phantom lag is a position before one)."""
    stream = make_stream(partitions=2)
    kafka.produce_transaction(spark, servers, stream, 0, [b"c0", b"c1"], commit=True)
    kafka.produce_transaction(spark, servers, stream, 0, [b"a0", b"a1", b"a2"], commit=False)
    kafka.produce(spark, servers, stream, [b"p0"], partitions=[1])
    kafka.produce_transaction(spark, servers, stream, 1, [b"a3"], commit=False)
    kafka.produce_transaction(spark, servers, stream, 1, [b"c2", b"c3"], commit=True)
    heads = kafka.upcoming_offsets(spark, servers, stream)
    assert heads == {0: 7, 1: 6}  # records and markers
    expected = ["c0", "c1", "c2", "c3", "p0"]

    def source() -> DataFrame:
        return (
            spark.readStream.format("streamctl")
            .options(
                **options.source(
                    servers, [stream], starting_offsets="earliest", kafka={"isolation.level": "read_committed"}
                )
            )
            .load()
        )

    once = tmp_path / "available-now"
    rows = run_available_now(source(), str(once))
    assert sorted(bytes(r.value).decode() for r in rows) == expected
    described = streamctl.describe(str(once), bootstrap_servers=servers)
    assert [(p.partition, p.committed, p.lag) for p in described.partitions] == [(0, 7, 0), (1, 6, 0)]

    seen: list[str] = []
    batches: list[int] = []  # the ids of the batches that read rows

    def collect(batch: DataFrame, batch_id: int) -> None:
        rows = [bytes(r.value).decode() for r in batch.collect()]
        seen.extend(rows)
        if rows:
            batches.append(batch_id)

    q = (
        source()
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(tmp_path / "processing-time"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        _await_caught_up(q, seen, batches, expected)
        # More at the ends of both partitions: an abort marker last on 0, a commit marker on 1.
        kafka.produce_transaction(spark, servers, stream, 0, [b"a4"], commit=False)
        kafka.produce_transaction(spark, servers, stream, 1, [b"c4"], commit=True)
        metrics = _await_caught_up(q, seen, batches, [*expected, "c4"])
        assert json.loads(metrics["recordsBehindHead"]) == {f"{stream}-0": 0, f"{stream}-1": 0}
    finally:
        q.stop()
    assert sorted(seen) == sorted([*expected, "c4"])
    described = streamctl.describe(str(tmp_path / "processing-time"), bootstrap_servers=servers)
    assert [(p.partition, p.committed, p.lag) for p in described.partitions] == [(0, 9, 0), (1, 8, 0)]


def _await_caught_up(q: StreamingQuery, seen: list[str], batches: list[int], expected: list[str]) -> dict[str, str]:
    """Waits until the query has read ``expected`` and the progress of the batch that read the last
    of it says 0 behind; returns that progress's source metrics."""
    deadline = time.monotonic() + 120
    while True:
        assert q.exception() is None, q.exception()
        if sorted(seen) == sorted(expected):
            done = [p for p in q.recentProgress if p["batchId"] == batches[-1]]
            if done:
                metrics = done[0]["sources"][0]["metrics"]
                assert metrics["maxOffsetsBehindLatest"] == "0", metrics
                return metrics
        assert time.monotonic() < deadline, f"not caught up: read {sorted(seen)}"
        time.sleep(0.2)
