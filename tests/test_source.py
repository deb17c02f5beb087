"""The streamctl source on a real broker: schema, exact reads, admission, AvailableNow, metrics."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from pyspark.sql import SparkSession

from streamctl import options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm

from conftest import run_available_now


def _produce_spread(spark: SparkSession, servers: str, stream: str, n: int, partitions: int) -> None:
    kafka.produce(
        spark,
        servers,
        stream,
        [f"v{i}".encode() for i in range(n)],
        keys=[f"k{i}".encode() for i in range(n)],
        partitions=[i % partitions for i in range(n)],
        timestamps=[1_700_000_000_000 + i for i in range(n)],
    )


@pytest.mark.smoke
def test_reads_every_record_exactly_once_with_its_metadata(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=3)
    _produce_spread(spark, servers, stream, 300, 3)
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest"))
        .load()
    )
    # Spark's Kafka columns in Spark's order (the column 'stream' became 'topic'), then streamctl's.
    assert df.columns == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
        "task",
        "watermark",
    ]
    rows = run_available_now(df, str(tmp_path / "cp"))
    seen = Counter((r.partition, r.offset) for r in rows)
    assert len(rows) == 300
    assert set(seen.values()) == {1}
    assert {p for p, _ in seen} == {0, 1, 2}
    for p in range(3):
        assert sorted(o for q, o in seen if q == p) == list(range(100))
    by_value = {r.value.decode(): r for r in rows}
    r = by_value["v7"]
    assert (r.key, r.topic, r.partition, r.offset, r.task) == (b"k7", stream, 1, 2, "Partition 1")
    assert int(r.timestamp.timestamp() * 1000) == 1_700_000_000_007
    assert r.timestampType == 0 and r.watermark is None


def test_latest_start_skips_existing_records_then_reads_new_ones(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=2)
    _produce_spread(spark, servers, stream, 10, 2)
    df = spark.readStream.format("streamctl").options(**options.source(servers, [stream])).load()
    cp = str(tmp_path / "cp")
    assert run_available_now(df, cp) == []
    kafka.produce(spark, servers, stream, [b"new"], partitions=[1])
    rows = run_available_now(df, cp)
    assert [(r.value, r.partition, r.offset) for r in rows] == [(b"new", 1, 5)]


def test_max_records_per_batch_bounds_every_batch_and_shares_fairly(spark, servers, make_stream, tmp_path):
    stream = make_stream(partitions=4)
    _produce_spread(spark, servers, stream, 200, 4)
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", max_records_per_batch=30))
        .load()
    )
    batches: list[list[tuple[int, int]]] = []

    def collect(batch_df, _batch_id):
        batches.append([(r.partition, r.offset) for r in batch_df.select("partition", "offset").collect()])

    q = (
        df.writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(180)
    assert q.exception() is None
    sizes = [len(b) for b in batches if b]
    assert sum(sizes) == 200
    assert max(sizes) <= 30
    first = Counter(p for p, _ in batches[0])
    # 30 records over 4 equally full partitions: a fair share gives each 7 or 8.
    assert sorted(first.values()) == [7, 7, 8, 8]
    progress = q.recentProgress
    metrics = [s["metrics"] for p in progress for s in p["sources"] if s.get("metrics")]
    assert metrics, "the source reports metrics in query progress"
    behind = json.loads(metrics[0]["recordsBehindHead"])
    assert set(behind) == {f"{stream}-{p}" for p in range(4)}
    assert metrics[-1]["maxOffsetsBehindLatest"] == "0"


def test_two_streams_grouped_by_partition_into_tasks(spark, servers, make_stream, tmp_path):
    a = make_stream(partitions=2, suffix="a")
    b = make_stream(partitions=2, suffix="b")
    _produce_spread(spark, servers, a, 20, 2)
    _produce_spread(spark, servers, b, 20, 2)
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [a, b], starting_offsets="earliest"))
        .load()
    )
    rows = run_available_now(df, str(tmp_path / "cp"))
    assert len(rows) == 40
    assert {(r.topic, r.partition, r.task) for r in rows} == {(s, p, f"Partition {p}") for s in (a, b) for p in (0, 1)}


def test_headers_are_exposed_with_include_headers(spark, servers, make_stream, tmp_path):
    stream = make_stream()
    kafka.produce_with_headers(spark, servers, stream, b"x", [("trace", b"t-1"), ("origin", b"eu")])
    kafka.produce(spark, servers, stream, [b"y"])
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest"))
        .option("includeHeaders", "true")
        .load()
    )
    assert df.columns[6:] == ["timestampType", "headers", "task", "watermark"]
    rows = {r.value: r.headers for r in run_available_now(df, str(tmp_path / "cp"))}
    assert [(h.key, h.value) for h in rows[b"x"]] == [("trace", b"t-1"), ("origin", b"eu")]
    assert rows[b"y"] is None


def _two_records_a_partition_a_batch(
    spark, servers: str, stream: str, partitions: int, checkpoint: str
) -> tuple[list[int], list[int]]:
    """Reads ``stream`` (10 records in each of its ``partitions``) in five AvailableNow batches of two
    records a partition, checks that each batch held exactly those, in each partition's order, each
    once, and returns the consumers the readers created and reused in each batch."""
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", max_records_per_batch=2 * partitions))
        .load()
    )
    batches: list[list[tuple[int, int]]] = []
    q = (
        df.writeStream.foreachBatch(
            lambda b, _id: batches.append([(r.partition, r.offset) for r in b.select("partition", "offset").collect()])
        )
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(180)
    assert q.exception() is None
    assert len(batches) == 5
    for i, b in enumerate(batches):
        assert sorted(b) == [(p, o) for p in range(partitions) for o in (2 * i, 2 * i + 1)], f"batch {i}"
    metrics = [p["sources"][0]["metrics"] for p in q.recentProgress if p["sources"][0].get("metrics")]
    return [int(m["consumersCreated"]) for m in metrics], [int(m["consumersReused"]) for m in metrics]


def test_by_default_the_pool_keeps_eight_consumers_for_each_reader_at_once(spark, servers, make_stream, tmp_path):
    """local[2] runs two readers at once, so unbounded by a setting the pool holds 16 consumers for
    a 24-partition topic: the other tasks borrow idle ones, none is created after the first batch,
    and every record is read once (micro-batch readers let the broker hold a fetch only 10 ms, so a
    borrowed consumer has no fetch left waiting)."""
    stream = make_stream(partitions=24)
    _produce_spread(spark, servers, stream, 240, 24)
    pool = jvm(spark).streamctl.system.ConsumerPool
    pool.clear()
    try:
        created, reused = _two_records_a_partition_a_batch(spark, servers, stream, 24, str(tmp_path / "cp"))
        held, bound = pool.openCount(), pool.countBound()
    finally:
        pool.clear()
    assert (bound, held) == (16, 16)
    assert created[0] + reused[0] == 24 and created[1:] == [0, 0, 0, 0], (created, reused)
    assert reused[1:] == [24, 24, 24, 24]


@pytest.mark.parametrize(
    "bound",
    [("maxConsumers", 3), ("maxMetadataPartitions", 36)],
    ids=["count", "metadata"],
)
def test_more_tasks_than_the_pool_holds_borrow_consumers_and_read_exactly_once(
    spark, servers, make_stream, tmp_path, bound
):
    """An executor runs more tasks than its pool holds consumers (3, or 36 partitions' metadata of
    a 12-partition topic): after the first batch no reader creates one, and the records a reader
    fetched past its range still serve its task's next batch on whichever consumer that gets."""
    stream = make_stream(partitions=12)
    _produce_spread(spark, servers, stream, 120, 12)
    # In local mode the driver's JVM is the executor: the pool is the one the readers use.
    pool = jvm(spark).streamctl.system.ConsumerPool
    setting, value = bound
    if setting == "maxConsumers":  # set, it is the exact bound: an Option, unset by default
        value = jvm(spark).scala.Some(value)
    before = getattr(pool, setting)()
    pool.clear()
    getattr(pool, f"{setting}_$eq")(value)
    try:
        created, reused = _two_records_a_partition_a_batch(spark, servers, stream, 12, str(tmp_path / "cp"))
        held = pool.openCount()
    finally:
        getattr(pool, f"{setting}_$eq")(before)
        pool.clear()
    assert created == [3, 0, 0, 0, 0]
    assert reused == [9, 12, 12, 12, 12]
    assert held == 3
