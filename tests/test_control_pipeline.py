"""Chained queries: the upstream watermark drives downstream windows; a bounded pipeline stops by itself."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime

import pytest
from pyspark.sql import functions as F

import streamctl
from streamctl import options
from streamctl_testing import control, kafka

# Event times start an hour ago, on a minute (so windows align): records far older than the
# broker's retention (7 days) would be deleted under the test by its retention check.
T0 = (int(time.time()) // 60 - 60) * 60_000
SECOND = 1_000


@pytest.fixture
def no_data_batches(spark) -> Iterator[None]:
    """Spark closes append-mode windows in a batch of its own once the watermark passed them."""
    key = "spark.sql.streaming.noDataMicroBatches.enabled"
    before = spark.conf.get(key)
    spark.conf.set(key, "true")
    yield
    spark.conf.set(key, before)


def _iso_ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def _windows(spark, table: str) -> list[tuple[int, int]]:
    rows = spark.table(table).collect()
    return sorted((int(r.window.start.timestamp() * 1000) - T0, r["count"]) for r in rows)


def test_window_waits_for_the_idle_producer_where_plain_spark_drops_late_rows(
    spark, servers, make_stream, tmp_path, no_data_batches
):
    mid = make_stream(partitions=2)
    source = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [mid], starting_offsets="earliest"))
        .options(**options.intermediate(mid))
        .load()
        .select("timestamp", "watermark")
    )

    def start(df, name):
        return (
            df.groupBy(F.window("timestamp", "10 seconds"))
            .count()
            .writeStream.format("memory")
            .queryName(name)
            .outputMode("append")
            .option("checkpointLocation", str(tmp_path / name))
            .trigger(processingTime="100 milliseconds")
            .start()
        )

    plain_name, ours_name = f"plain_{abs(hash(mid))}", f"upstream_{abs(hash(mid))}"
    plain = start(source.withWatermark("timestamp", "0 seconds"), plain_name)
    ours = start(streamctl.with_upstream_watermark(source, "timestamp"), ours_name)

    def produce(fast: list[int], idle: list[int], watermarks: dict[str, int]) -> None:
        """Producer 'fast' writes partition 0, 'idle' partition 1; both send watermarks everywhere."""
        seconds = fast + idle
        control.produce_framed(
            spark,
            servers,
            mid,
            [b"x"] * len(seconds),
            partitions=[0] * len(fast) + [1] * len(idle),
            timestamps=[T0 + s * SECOND for s in seconds],
        )
        for producer, s in watermarks.items():
            control.send_watermark(spark, servers, mid, producer, 2, T0 + s * SECOND)

    def settle() -> None:
        for q in (plain, ours):
            q.processAllAvailable()

    try:
        # Window [0, 10) gets 1, 2, 3 from the fast producer and 4 from the idle one; the fast one
        # is far ahead (100 s) and says so, the idle one has only reached 5 s.
        produce([1, 2, 3, 100, 101], [4], {"fast": 100, "idle": 5})
        produce([102], [], {})  # rows after the watermark messages carry them
        settle()
        assert _windows(spark, plain_name) == [(0, 4)], "plain Spark: max(event time) = 102 s closed [0, 10)"
        assert _windows(spark, ours_name) == [], "upstream watermark 5 s: [0, 10) still open"

        # The idle producer catches up: one more row for [0, 10) (late for plain Spark), then 50 s.
        produce([], [6], {"idle": 50})
        settle()
        # A row knows the other tasks' SSPs as of its batch start: the next rows carry 50 s.
        produce([103], [51], {})
        settle()
        assert _windows(spark, plain_name) == [(0, 4)], "plain Spark dropped the late row at 6 s"
        assert _windows(spark, ours_name) == [(0, 5)], "closed only once the slowest producer passed it, with all rows"
        assert _iso_ms(ours.lastProgress["eventTime"]["watermark"]) == T0 + 50 * SECOND
        assert _iso_ms(plain.lastProgress["eventTime"]["watermark"]) == T0 + 103 * SECOND
        # Both plans scan the source once (Spark sums numInputRows over every scan of a source).
        for q in (plain, ours):
            assert sum(p["numInputRows"] for p in q.recentProgress) == 10, q.name
    finally:
        plain.stop()
        ours.stop()


# The smoke set of the other Spark lines runs the at-least-once pipeline only.
@pytest.mark.parametrize(
    "transactional",
    [pytest.param(False, id="at-least-once", marks=pytest.mark.smoke), pytest.param(True, id="transactional")],
)
def test_three_stage_bounded_pipeline_stops_by_itself_and_matches_a_batch_job(
    spark, servers, make_stream, tmp_path, transactional
):
    """Also with transactional intermediate streams, which readers of an intermediate stream read
    read_committed by default (docs/exactly-once.md): watermarks and end-of-stream still cross both
    hops and end the pipeline."""
    events, mid1, mid2 = make_stream(4, "events"), make_stream(3, "mid1"), make_stream(2, "mid2")
    n = 240
    keys = [f"k{i % 7}" for i in range(n)]
    stamps = [T0 + i * 400 for i in range(n)]  # 96 s of events, ten 10 s windows
    kafka.produce(
        spark,
        servers,
        events,
        [str(i).encode() for i in range(n)],
        keys=[k.encode() for k in keys],
        partitions=[i % 4 for i in range(n)],
        timestamps=stamps,
    )

    def intermediate(stream):
        return (
            spark.readStream.format("streamctl")
            .options(**options.source(servers, [stream], starting_offsets="earliest"))
            .options(**options.intermediate(stream))
            .load()
        )

    def write(df, stream, name, **trigger):
        return (
            df.writeStream.format("streamctl")
            .queryName(name)
            .options(**options.sink(servers, stream, intermediate=True, transactional=transactional))
            .option("checkpointLocation", str(tmp_path / name))
            .trigger(**trigger)
            .start()
        )

    # Stage 3: windowed count per key on the upstream watermark (update mode: a window's last row wins).
    counts: dict[tuple[int, str], int] = {}

    def upsert(batch, _batch_id):
        for r in batch.collect():
            counts[(int(r.window.start.timestamp() * 1000), r.key)] = r["count"]

    parsed = intermediate(mid2).select(
        F.col("key").cast("string").alias("key"),
        F.timestamp_millis(F.split(F.col("value").cast("string"), ",")[0].cast("long")).alias("ts"),
        "watermark",
    )
    stage3 = (
        streamctl.with_upstream_watermark(parsed, "ts")
        .groupBy(F.window("ts", "10 seconds"), "key")
        .count()
        .writeStream.queryName("stage3")
        .outputMode("update")
        .foreachBatch(upsert)
        .option("checkpointLocation", str(tmp_path / "stage3"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    # Stage 2: repartition by key into a second intermediate stream.
    stage2 = write(
        intermediate(mid1).repartition(3, "key").select("key", "value"),
        mid2,
        "stage2",
        processingTime="200 milliseconds",
    )
    # Stage 1: the bounded source, its event time carried in the value; AvailableNow ends it.
    stage1 = write(
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [events], starting_offsets="earliest", max_records_per_batch=30))
        .load()
        .withWatermark("timestamp", "30 seconds")
        .repartition(2, "key")
        .select(
            "key",
            F.concat_ws(",", F.unix_millis("timestamp").cast("string"), F.col("value").cast("string")).alias("value"),
        ),
        mid1,
        "stage1",
        availableNow=True,
    )
    try:
        for q in (stage1, stage2, stage3):
            assert q.awaitTermination(240), f"{q.name} did not stop by itself"
            assert q.exception() is None
    finally:
        for q in (stage1, stage2, stage3):
            if q.isActive:
                q.stop()

    expected = Counter(((s - s % 10_000), k) for s, k in zip(stamps, keys, strict=True))
    assert counts == dict(expected)
    # Each stage sent advancing watermarks and, last, its end-of-stream to every partition it writes.
    final = {}
    for stream, partitions, producer in ((mid1, 3, "stage1"), (mid2, 2, "stage2")):
        for p in range(partitions):
            raw = kafka.read_raw(spark, servers, stream, p)
            assert raw[-1][0] == 2 and json.loads(raw[-1][1:])["taskName"] == producer
            marks = [json.loads(r[1:])["timestamp"] for r in raw if r[0] == 1]
            assert marks == sorted(set(marks)) and marks[-1] > T0
            final[stream] = marks[-1]
    # Stage 1's watermark crossed stage 2 into stage 3 (as its reconciled upstream watermark).
    assert final[mid2] == final[mid1]
    reported = [p["sources"][0]["metrics"] for p in stage3.recentProgress if p["sources"][0]["metrics"]]
    assert int(reported[-1]["watermark"]) == final[mid2]
