"""In-band control messages on a real broker: reconciliation, end-of-stream across a restart, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql.streaming import StreamingQueryListener

import streamctl
from streamctl import options
from streamctl_testing import control, kafka

from conftest import (
    T0,
    committed_batches,
    control_metrics,
    forwarding_query,
    idle_triggers,
    raw_records,
    read_intermediate,
    record_shape,
    run_job_until,
    wait_for,
)


def test_watermark_is_the_minimum_over_producers_and_never_moves_back(spark, servers, make_stream, tmp_path):
    mid = make_stream(partitions=2)
    batches: dict[int, list] = {}
    q = (
        read_intermediate(spark, servers, mid)
        .writeStream.foreachBatch(
            lambda b, i: batches.__setitem__(i, b.select("partition", "value", "watermark").collect())
        )
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    seen: dict[int, list] = {0: [], 1: []}

    def step(label: str, watermarks: list[tuple[str, int]]) -> tuple[set, dict]:
        """The marks the step's two rows carried (one per partition) and the progress after it.

        The two rows may carry different marks: the trigger can split a step's messages over two
        batches, and a row sees the other partition's watermark as of its batch's start.
        """
        for producer, ts in watermarks:
            control.send_watermark(spark, servers, mid, producer, 3, ts)
        control.produce_framed(spark, servers, mid, [label.encode()] * 2, partitions=[0, 1])
        q.processAllAvailable()
        rows = [r for b in batches.values() for r in b if r.value == label.encode()]
        assert sorted(r.partition for r in rows) == [0, 1]
        for r in rows:
            seen[r.partition].append(None if r.watermark is None else int(r.watermark.timestamp() * 1000))
        return {seen[p][-1] for p in (0, 1)}, control_metrics(q.lastProgress)

    def ssp_watermarks(m: dict) -> set:
        return {m["control"][f"{mid}-{p}"].get("watermark") for p in (0, 1)}

    try:
        assert step("before", [])[0] == {None}
        marks, m = step("two-of-three", [("p0", 10), ("p1", 20)])
        assert marks == {None}, "undefined until all three producers reported"
        assert m["control"][f"{mid}-0"]["producers"] == 2 and m["watermark"] is None
        marks, m = step("all-three", [("p2", 5)])
        assert m["control"][f"{mid}-1"] == {"taskCount": 3, "producers": 3, "endOfStream": 0, "idle": 0, "watermark": 5}
        assert m["watermark"] == 5 and marks <= {None, 5}
        marks, m = step("p2-at-30", [("p2", 30)])
        assert ssp_watermarks(m) == {10} and m["watermark"] == 10
        # A row sees its own task's SSPs live and the other tasks' as of the batch start.
        assert marks <= {5, 10}
        marks, m = step("p0-goes-back", [("p0", 8)])
        assert ssp_watermarks(m) == {10} and marks == {10}, "an older watermark is ignored; it never moves back"
        assert m["endOfStream"] == "false"
        for p, marks_of_p in seen.items():
            defined = [w for w in marks_of_p if w is not None]
            undefined_first = [None] * (len(marks_of_p) - len(defined)) + sorted(defined)
            assert marks_of_p == undefined_first and marks_of_p[-1] == 10, f"partition {p} moved back: {marks_of_p}"
    finally:
        q.stop()


def _copy_query(spark, servers, stream, checkpoint: Path, output: Path):
    df = read_intermediate(spark, servers, stream, max_records_per_batch=10).select("partition", "offset", "value")
    return (
        df.writeStream.format("parquet")
        .option("path", str(output))
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="200 milliseconds")
        .start()
    )


def test_end_of_stream_from_every_producer_across_a_kill_stops_the_consumer(spark, servers, make_stream, tmp_path):
    mid = make_stream(partitions=4)
    n = 40
    values = [str(i).encode() for i in range(n)]
    control.produce_framed(spark, servers, mid, values, partitions=[i % 4 for i in range(n)])
    for producer in ("p0", "p1"):
        control.send_end_of_stream(spark, servers, mid, producer, 3)
    checkpoint, output = tmp_path / "cp", tmp_path / "out"

    # A consumer in its own driver reads all of it (10 records a batch) and is SIGKILLed.
    # 40 records and 8 end-of-stream messages, 10 a batch: both ends are read in the 5th batch.
    run_job_until(
        "_control_job.py",
        [servers, mid, str(checkpoint), str(output)],
        lambda: committed_batches(checkpoint) >= 5,
        timeout=180,
        died="the consumer stopped after end-of-stream from 2 of 3 producers",
        stuck="the consumer made no progress",
    )

    # Restarted, it still knows p0 and p1 ended; end-of-stream from p2 completes every partition.
    q = _copy_query(spark, servers, mid, checkpoint, output)
    control.send_end_of_stream(spark, servers, mid, "p2", 3)
    assert q.awaitTermination(180), "the consumer did not stop by itself at end-of-stream"
    assert q.exception() is None
    m = control_metrics([p for p in q.recentProgress if p["sources"][0]["metrics"]][-1])
    assert m["endOfStream"] == "true"
    assert all(m["control"][f"{mid}-{p}"]["endOfStream"] == 3 for p in range(4))

    rows = spark.read.parquet(str(output)).collect()
    seen = Counter((r.partition, r.offset) for r in rows)
    assert len(rows) == n and max(seen.values()) == 1
    assert sorted(int(r.value) for r in rows) == list(range(n))


def test_a_query_restarted_after_every_input_ended_stops_without_new_data(spark, servers, make_stream, tmp_path):
    """A bounded pipeline's consumer that is started again (a re-run of the pipeline's script) finds
    end-of-stream from every producer in its checkpoint and nothing new: it stops by itself, as it
    did the first time, rather than wait for data that will never come."""
    mid = make_stream(partitions=2)
    control.produce_framed(spark, servers, mid, [b"a", b"b"], partitions=[0, 1])
    control.send_end_of_stream(spark, servers, mid, "p0", 1)
    checkpoint, output = tmp_path / "cp", tmp_path / "out"
    q = _copy_query(spark, servers, mid, checkpoint, output)
    assert q.awaitTermination(120), "the consumer did not stop at end-of-stream"
    q = _copy_query(spark, servers, mid, checkpoint, output)
    assert q.awaitTermination(120), "the restarted consumer did not stop: it read nothing new and every input had ended"
    assert q.exception() is None
    assert not [p for p in q.recentProgress if p["numInputRows"] > 0]
    assert sorted(r.value for r in spark.read.parquet(str(output)).collect()) == [b"a", b"b"]


def test_end_of_stream_survives_a_driver_killed_right_after_its_batch_committed(spark, servers, make_stream, tmp_path):
    """The driver dies the moment Spark's commit log holds the batch that carried end-of-stream from
    p0 on every partition, before it plans the next: the batch's control results must be in the
    store already (the restarted query plans from them), so p1's end-of-stream ends the restarted
    query."""
    mid = make_stream(partitions=4)
    n = 20
    control.produce_framed(
        spark, servers, mid, [str(i).encode() for i in range(n)], partitions=[i % 4 for i in range(n)]
    )
    control.send_end_of_stream(spark, servers, mid, "p0", 2)
    checkpoint, output, log = tmp_path / "cp", tmp_path / "out", tmp_path / "job.log"
    with log.open("w") as stderr:
        job = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).with_name("_control_job.py")),
                *(servers, mid, str(checkpoint), str(output), "--kill-after", "0"),
            ],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            job.wait(timeout=180)
        finally:
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
                job.wait()
    assert job.returncode == -signal.SIGKILL, f"the job was not killed at its commit:\n{log.read_text()[-3000:]}"
    assert (checkpoint / "commits" / "0").exists() and not (checkpoint / "offsets" / "1").exists()

    q = _copy_query(spark, servers, mid, checkpoint, output)
    control.send_end_of_stream(spark, servers, mid, "p1", 2)
    assert q.awaitTermination(180), "the restarted consumer forgot p0's end-of-stream"
    assert q.exception() is None
    assert not [p for p in q.recentProgress if p["numInputRows"] > 0], "the restart read nothing again"
    assert sorted(int(r.value) for r in spark.read.parquet(str(output)).collect()) == list(range(n))


def test_a_batch_writes_its_control_results_as_one_value_whatever_the_partition_count(
    spark, servers, make_stream, tmp_path
):
    """A watermark in every partition every batch: the readers' control results of a batch are one
    value in the metadata store, at 64 partitions as at 8 (one per task made them grow with the
    partitions). Counted in each batch once its readers ran: that batch's value and the previous."""
    most: dict[int, int] = {}
    for partitions in (8, 64):
        mid = make_stream(partitions=partitions)
        for r in range(3):  # each batch: 2 records and 1 watermark per partition
            control.produce_synthetic_framed(spark, servers, mid, 2 * partitions, 10)
            control.send_watermark(spark, servers, mid, "up", 1, T0 + r)
        checkpoint = tmp_path / f"cp-{partitions}"
        namespace = checkpoint / "streamctl" / "control-0"
        counts: list[int] = []

        def batch(df, _: int, namespace: Path = namespace, counts: list[int] = counts) -> None:
            df.count()  # runs every reader of the batch
            counts.append(
                len([f for f in namespace.iterdir() if not f.name.startswith(".")]) if namespace.is_dir() else 0
            )

        q = (
            read_intermediate(spark, servers, mid, max_records_per_batch=3 * partitions)
            .writeStream.foreachBatch(batch)
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        assert q.awaitTermination(300)
        assert q.exception() is None
        assert len(counts) >= 3
        assert namespace.is_dir(), "the readers wrote no control results to the store"
        most[partitions] = max(counts)
    assert min(most.values()) >= 1, f"a batch that read control messages left no result in the store: {most}"
    assert max(most.values()) <= 2, f"most control result values in the store during a batch: {most}"


def test_end_of_stream_on_request_and_stop_on_end_of_stream_off(spark, servers, make_stream, tmp_path):
    src, mid, out = make_stream(2, "src"), make_stream(2, "mid"), make_stream(2, "out")
    n = 20
    kafka.produce(
        spark,
        servers,
        src,
        [str(i).encode() for i in range(n)],
        keys=[str(i).encode() for i in range(n)],
        timestamps=[T0 + 1_000 * i for i in range(n)],
    )
    upstream = (
        forwarding_query(spark, servers, src, mid, tmp_path / "up")
        .queryName("control_upstream")
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    downstream = (
        read_intermediate(spark, servers, mid, stop_on_end_of_stream=False)
        .select("key", "value")
        .writeStream.format("streamctl")
        .options(**options.sink(servers, out, intermediate=True))
        .option("checkpointLocation", str(tmp_path / "down"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    # Added after the queries started, so after streamctl's listener: Spark's listener bus hands each
    # report to the listeners in the order they were added.
    heard = _Reports()
    spark.streams.addListener(heard)
    try:
        upstream.processAllAvailable()
        streamctl.end_of_stream(upstream)
        assert not upstream.isActive and upstream.exception() is None

        # Upstream: every partition has the data, then advancing watermarks, then its end-of-stream.
        for p in range(2):
            records = raw_records(spark, servers, mid, p)
            controls = [c for t, c in records if t != 0]
            assert [t for t, _ in records[-1:]] == [2]
            assert all(c["taskName"] == "control_upstream" and c["taskCount"] == 1 for c in controls)
            marks = [c["timestamp"] for t, c in records if t == 1]
            assert marks and marks == sorted(set(marks)) and T0 < marks[-1] <= T0 + n * 1_000
        assert sum(1 for p in range(2) for t, _ in raw_records(spark, servers, mid, p) if t == 0) == n

        # Downstream sees end-of-stream on every input but keeps running (stop.on.end.of.stream=false).
        wait_for(
            "downstream's end-of-stream report", lambda: heard.reported_end_of_stream(str(downstream.id)), downstream
        )
        # Were the option on, streamctl's listener, which had that report first, would stop the query
        # at its next trigger that finds nothing new.
        idle_triggers(downstream)
        assert downstream.isActive
        streamctl.end_of_stream(downstream)
        for p in range(2):
            records = raw_records(spark, servers, out, p)
            assert records[-1][0] == 2 and records[-1][1]["taskName"] == f"query-{downstream.id}"
        assert sum(1 for p in range(2) for t, _ in raw_records(spark, servers, out, p) if t == 0) == n
    finally:
        spark.streams.removeListener(heard)
        for q in (upstream, downstream):
            if q.isActive:
                q.stop()


class _Reports(StreamingQueryListener):
    """The progress reports this listener was handed, by query id."""

    def __init__(self) -> None:
        self.reports: list[dict] = []

    def reported_end_of_stream(self, query_id: str) -> bool:
        return any(r["id"] == query_id and control_metrics(r)["endOfStream"] == "true" for r in list(self.reports))

    # pyspark's method names.
    def onQueryStarted(self, event) -> None:
        pass

    def onQueryProgress(self, event) -> None:
        self.reports.append(json.loads(event.progress.json))

    def onQueryIdle(self, event) -> None:
        pass

    def onQueryTerminated(self, event) -> None:
        pass


def test_the_watermark_goes_downstream_with_the_batch_that_applies_it(spark, servers, make_stream, tmp_path):
    # Three batches of 5 records, event times 1 s apart: Spark applies T0+4 s in batch 1 and T0+9 s in
    # batch 2. Each must follow that batch's data, not wait for the next batch's progress report.
    src, mid = make_stream(1, "src"), make_stream(1, "mid")
    n = 15
    values, times = [str(i).encode() for i in range(n)], [T0 + 1_000 * i for i in range(n)]
    kafka.produce(spark, servers, src, values, timestamps=times)
    q = forwarding_query(spark, servers, src, mid, tmp_path / "up").trigger(availableNow=True).start()
    q.awaitTermination(120)
    assert q.exception() is None
    shape = record_shape(raw_records(spark, servers, mid, 0))
    assert shape == ["active", *range(10), 4_000, *range(10, 15), 9_000, "eos"]


def test_a_restarted_query_sends_its_restored_watermark_with_its_first_batch(spark, servers, make_stream, tmp_path):
    # Run 1 reads 5 records (event times T0..T0+4 s) and stops; Spark checkpoints T0+4 s for the next
    # batch. The first batch after the restart applies it and must send it, with no progress report yet.
    src, mid = make_stream(1, "src"), make_stream(1, "mid")

    def run_once(first: int) -> None:
        records = range(first, first + 5)
        times = [T0 + 1_000 * i for i in records]
        kafka.produce(spark, servers, src, [str(i).encode() for i in records], timestamps=times)
        writer = forwarding_query(spark, servers, src, mid, tmp_path / "up")
        q = writer.trigger(processingTime="100 milliseconds").start()
        try:
            q.processAllAvailable()
        finally:
            q.stop()

    run_once(0)
    run_once(5)
    assert record_shape(raw_records(spark, servers, mid, 0)) == ["active", *range(5), "active", *range(5, 10), 4_000]


def test_synthetic_framed_records_are_user_records_spread_over_partitions(spark, servers, make_stream):
    mid = make_stream(4, "mid")
    assert control.produce_synthetic_framed(spark, servers, mid, 40, value_size=12) == 40
    for p in range(4):
        records = raw_records(spark, servers, mid, p)
        assert [(t, len(v)) for t, v in records] == [(0, 12)] * 10


def _eos(producer: str, count: int) -> bytes:
    return b"\x02" + json.dumps({"version": 1, "taskName": producer, "taskCount": count}).encode()


def _wm(producer: str, count: int, ts: int) -> bytes:
    return b"\x01" + json.dumps({"version": 1, "taskName": producer, "taskCount": count, "timestamp": ts}).encode()


@pytest.mark.parametrize(
    ("records", "offset", "fragment"),
    [
        ([b"\x07?"], 1, "unknown type byte 7"),
        ([b'\x01{"version":2,"taskName":"p0","taskCount":1,"timestamp":5}'], 1, "version 2, newer than"),
        ([b'\x02{"version":1,"taskName":'], 1, "malformed JSON"),
        ([_eos("p0", 2), _wm("p0", 3, 7)], 2, "says taskCount 3"),
        ([_eos("p0", 1), b"\x00late"], 2, "data message after end-of-stream"),
    ],
    ids=["unknown-type", "newer-version", "malformed-json", "task-count-changes", "data-after-eos"],
)
def test_bad_control_input_names_stream_partition_offset(
    spark, servers, make_stream, tmp_path, records, offset, fragment
):
    stream = make_stream()
    kafka.produce(spark, servers, stream, [b"\x00ok", *records])
    q = (
        read_intermediate(spark, servers, stream)
        .writeStream.foreachBatch(lambda b, i: b.count())
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(StreamingQueryException) as err:
        q.awaitTermination(120)
    assert f"stream '{stream}' partition 0 offset {offset}" in str(err.value)
    assert fragment in str(err.value)
