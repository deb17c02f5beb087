"""Startpoints on a real broker and a real SparkSession: a query with a checkpoint restarts from
where its startpoints say, once, keeping its state; a crash before the commit re-applies nothing."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame

from streamctl import Startpoint, StartpointManager, options
from streamctl_testing import kafka

from conftest import idle_triggers, run_job_until, wait_for

# Recent, whole seconds: old timestamps would depend on the broker's retention settings.
BASE_TS = (int(time.time()) - 3600) * 1000


def _source(spark, servers: str, streams: list[str], **extra: str) -> DataFrame:
    return (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, streams, starting_offsets="earliest"))
        .options(**extra)
        .load()
    )


def _batches(df: DataFrame, checkpoint: str) -> list[dict[int, list[int]]]:
    """Runs to the end (AvailableNow); per non-empty batch, the offsets read per partition."""
    batches: list[dict[int, list[int]]] = []

    def collect(batch, _batch_id):
        read: dict[int, list[int]] = {}
        for r in batch.select("partition", "offset").collect():
            read.setdefault(r.partition, []).append(r.offset)
        if read:
            batches.append({p: sorted(o) for p, o in read.items()})

    q = df.writeStream.foreachBatch(collect).option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
    q.awaitTermination(180)
    if q.exception() is not None:
        raise q.exception()  # type: ignore[misc]
    return batches


def _produce(spark, servers, stream, partitions: int, per_partition: int, ts=lambda i: BASE_TS + i * 1000):
    kafka.produce(
        spark,
        servers,
        stream,
        [f"v{i}".encode() for i in range(partitions * per_partition)],
        partitions=[i % partitions for i in range(partitions * per_partition)],
        timestamps=[ts(i // partitions) for i in range(partitions * per_partition)],
    )


@pytest.mark.smoke
def test_each_type_moves_only_its_partition_once(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=6)
    _produce(spark, servers, stream, 6, 10)  # offsets 0-9 at BASE_TS + 0..9 s
    cp = str(tmp_path / "cp")
    df = _source(spark, servers, [stream])
    assert sum(len(o) for b in _batches(df, cp) for o in b.values()) == 60

    _produce(spark, servers, stream, 6, 2, ts=lambda i: BASE_TS + 60_000 + i)  # offsets 10, 11
    manager = StartpointManager(spark, checkpoint=cp)
    manager.set(stream, 0, Startpoint.oldest())
    manager.set(stream, 0, Startpoint.specific(3), task="Partition 0")  # task-level beats SSP-only
    manager.set(stream, 1, Startpoint.timestamp(datetime.fromtimestamp((BASE_TS + 6000) / 1000, UTC)))
    manager.set(stream, 2, Startpoint.oldest())
    manager.set(stream, 3, Startpoint.upcoming())
    manager.set(stream, 4, Startpoint.timestamp(datetime.now(UTC) + timedelta(days=1)))  # the future: the end
    assert len(manager.list()) == 6

    first = _batches(df, cp)[0]
    assert first == {
        0: list(range(3, 12)),
        1: list(range(6, 12)),
        2: list(range(0, 12)),
        # 3 and 4 begin at the end (12): nothing to read
        5: [10, 11],  # no startpoint: the checkpoint
    }
    assert manager.list() == [], "the applying batch committed: every startpoint is gone"
    applied = _applied_in_offset_log(cp)
    assert applied[f"kafka/{stream}/4"] == {"offset": 12, "endOfPartition": True, "tasks": ["Partition 4"]}
    assert applied[f"kafka/{stream}/0"] == {"offset": 3, "tasks": ["Partition 0"]}

    _produce(spark, servers, stream, 6, 1, ts=lambda i: BASE_TS + 120_000)
    assert _batches(df, cp) == [{p: [12] for p in range(6)}], "a second restart resumes from the checkpoint"


def _applied_in_offset_log(cp: str) -> dict[str, dict]:
    """SSP key -> what the offset log says a batch applied (the source's 'startpoints' state)."""
    found: dict[str, dict] = {}
    for path in sorted((Path(cp) / "offsets").iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else -1):
        if not path.name.isdigit():
            continue
        for line in path.read_text().splitlines()[2:]:
            state = json.loads(line).get("state", {}) if line.startswith("{") else {}
            for entry in state.get("startpoints", {}).get("applied", []):
                found.update(entry["ssps"])
    return found


def test_rewinding_an_hour_keeps_the_running_count(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=2)
    now = datetime.now(UTC)
    old = int((now - timedelta(hours=2)).timestamp() * 1000)
    recent = int((now - timedelta(minutes=30)).timestamp() * 1000)
    _produce(spark, servers, stream, 2, 6, ts=lambda i: old if i < 4 else recent)  # per partition: 4 old, 2 recent
    cp = str(tmp_path / "cp")
    counts: dict[int, int] = {}

    def run() -> None:
        q = (
            _source(spark, servers, [stream])
            .groupBy("partition")
            .count()
            .writeStream.outputMode("complete")
            .foreachBatch(lambda batch, _id: counts.update({r.partition: r["count"] for r in batch.collect()}))
            .option("checkpointLocation", cp)
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination(180)
        assert q.exception() is None

    run()
    assert counts == {0: 6, 1: 6}
    # The README's example: no partition given, so every partition (listed through Kafka).
    manager = StartpointManager(spark, checkpoint=cp, bootstrap_servers=servers)
    written = manager.set(stream, startpoint=Startpoint.timestamp(now - timedelta(hours=1)))
    assert [(e.partition, e.offset, e.end_of_partition) for e in written] == [(0, 4, False), (1, 4, False)]
    run()
    assert counts == {0: 8, 1: 8}, "the state survived and the last hour was counted again"


def test_a_kill_between_apply_and_commit_replays_the_same_offsets_and_deletes_after(
    spark, servers, make_stream, tmp_path
):
    stream = make_stream(partitions=2)
    _produce(spark, servers, stream, 2, 10)
    cp = str(tmp_path / "cp")
    df = _source(spark, servers, [stream])
    _batches(df, cp)
    _produce(spark, servers, stream, 2, 5)  # offsets 10-14
    manager = StartpointManager(spark, checkpoint=cp)
    manager.set(stream, 0, Startpoint.specific(2))

    marker = tmp_path / "first-batch.json"
    # Killed mid-batch: planned and logged, not committed.
    run_job_until(
        "_startpoint_job.py",
        [servers, stream, cp, str(marker)],
        marker.exists,
        timeout=180,
        died="the job died on its own",
        stuck="the job never ran its first batch",
        log=tmp_path / "job.log",
    )
    crashed = json.loads(marker.read_text())
    batch = crashed["batch"]
    assert crashed["read"] == {"0": list(range(2, 15)), "1": list(range(10, 15))}
    assert not (Path(cp) / "commits" / str(batch)).exists()
    assert [(e.partition, e.task) for e in manager.list()] == [(0, "Partition 0")], "fanned out, not deleted"

    replayed: list[tuple[int, dict[int, list[int]], int]] = []

    def collect(b, batch_id):
        read: dict[int, list[int]] = {}
        for r in b.select("partition", "offset").collect():
            read.setdefault(r.partition, []).append(r.offset)
        # What the store holds while this batch runs, before its commit.
        replayed.append((batch_id, {p: sorted(o) for p, o in read.items()}, len(manager.list())))

    q = df.writeStream.foreachBatch(collect).option("checkpointLocation", cp).trigger(availableNow=True).start()
    q.awaitTermination(180)
    assert q.exception() is None
    assert replayed[0] == (batch, {0: list(range(2, 15)), 1: list(range(10, 15))}, 1)
    assert [read for _, read, _ in replayed[1:] if read] == [], "applied once: nothing read twice"
    assert manager.list() == []


def test_a_startpoint_written_while_running_waits_for_the_restart(spark, servers, make_stream, tmp_path):
    stream = make_stream()
    _produce(spark, servers, stream, 1, 5)
    cp = str(tmp_path / "cp")
    df = _source(spark, servers, [stream])
    read: list[int] = []
    q = (
        df.writeStream.foreachBatch(lambda b, _id: read.extend(r.offset for r in b.select("offset").collect()))
        .option("checkpointLocation", cp)
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        wait_for("the five records", lambda: len(read) == 5, q)
        manager = StartpointManager(spark, checkpoint=cp)
        manager.set(stream, 0, Startpoint.oldest())
        _produce(spark, servers, stream, 1, 1)
        wait_for("the record produced after the startpoint", lambda: 5 in read, q)
        idle_triggers(q, 5)  # several more triggers, each of which could have applied it
        assert read == [0, 1, 2, 3, 4, 5], "not applied while the query runs"
        assert len(manager.list()) == 1
    finally:
        q.stop()
    assert _batches(df, cp) == [{0: [0, 1, 2, 3, 4, 5]}], "applied at the restart"
    assert manager.list() == []


def test_an_ssp_startpoint_on_a_broadcast_stream_reaches_every_task(spark, servers, make_stream, tmp_path):
    main, rates = make_stream(partitions=2, suffix="main"), make_stream(suffix="rates")
    _produce(spark, servers, main, 2, 2)
    _produce(spark, servers, rates, 1, 4)
    cp = str(tmp_path / "cp")
    df = _source(spark, servers, [main, rates], **{f"stream.{rates}.broadcast": "true"})
    runs: list[list[tuple[int, str, int]]] = []

    def run() -> None:
        rows: list[tuple[int, str, int]] = []
        q = (
            df.writeStream.foreachBatch(
                lambda b, i: rows.extend((i, r.task, r.offset) for r in b.collect() if r.topic == rates)
            )
            .option("checkpointLocation", cp)
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination(180)
        assert q.exception() is None
        runs.append(rows)

    run()
    assert sorted({task for _, task, _ in runs[0]}) == ["Partition 0", "Partition 1"], "both tasks read the stream"
    manager = StartpointManager(spark, checkpoint=cp)
    manager.set(rates, 0, Startpoint.oldest())
    manager.set(rates, 0, Startpoint.specific(2), task="Partition 1")
    run()
    first = min(i for i, _, _ in runs[1])
    assert sorted((t, o) for i, t, o in runs[1] if i == first) == [
        ("Partition 0", 0),
        ("Partition 0", 1),
        ("Partition 0", 2),
        ("Partition 0", 3),
        ("Partition 1", 2),
        ("Partition 1", 3),
    ]
    assert manager.list() == []


def test_a_query_logging_in_the_background_is_refused_while_startpoints_wait(spark, servers, make_stream, tmp_path):
    """Under Spark's asynchronous progress tracking a batch is planned before the ones before it are
    logged, and some are never logged: the batch that applies a startpoint could be lost, or the
    startpoint applied twice. Such a run is refused at its first planning, naming the option, and
    the startpoint waits in the store; the run that turns the option off applies it."""
    stream = make_stream(partitions=1)
    _produce(spark, servers, stream, 1, 4)
    cp = str(tmp_path / "cp")
    manager = StartpointManager(spark, checkpoint=cp)
    manager.set(stream, 0, Startpoint.specific(2))

    def start(in_background: bool):
        return (
            _source(spark, servers, [stream])
            .writeStream.foreach(lambda _row: None)
            .option("checkpointLocation", cp)
            .option("asyncProgressTrackingEnabled", str(in_background).lower())
            .trigger(processingTime="0 seconds")
            .start()
        )

    refused = start(True)
    with pytest.raises(StreamingQueryException, match="'asyncProgressTrackingEnabled' set to false"):
        refused.awaitTermination(120)
    assert [e.key for e in manager.list()] == [f"kafka/{stream}/0"], "the store as the user wrote it"

    q = start(False)
    try:
        wait_for("the startpoint applied and deleted", lambda: manager.list() == [], q)
        assert q.exception() is None
    finally:
        q.stop()
    assert _applied_in_offset_log(cp)[f"kafka/{stream}/0"]["offset"] == 2
