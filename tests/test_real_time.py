"""Real-time mode (``trigger(realTime=...)``) on a real broker and SparkSession: the streamctl source
reads continuously, its rows reach the streamctl sink within a batch, and in-band control works
at record granularity."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest
from _real_time_job import REAL_TIME_CONFS, start_copy
from pyspark.errors import StreamingQueryException
from pyspark.sql import functions as F

import streamctl
from streamctl import options
from streamctl.startpoints import Startpoint, StartpointManager
from streamctl_testing import control, kafka

from conftest import (
    T0,
    committed_batches,
    driver_log,
    planned_batches,
    raw_records,
    run_job_until,
    session_conf,
    wait_for,
)

# Spark's default minimum is 5 s; the batch duration is only the checkpoint interval, so tests
# use short ones where they need batches to end and long ones where they must not.
SHORT = "2 seconds"
LONG = "10 minutes"


@pytest.fixture
def real_time(spark) -> Iterator[None]:
    """Session settings a real-time query with a streamctl sink needs (docs/real-time.md)."""
    with session_conf(spark, REAL_TIME_CONFS):
        yield


def user_values(spark, servers: str, stream: str, partition: int = 0) -> list[str]:
    """The user records of an intermediate partition (written with ``intermediate=True``)."""
    return [bytes(c).decode() for t, c in raw_records(spark, servers, stream, partition) if t == 0]  # type: ignore[arg-type]


def plain_values(spark, servers: str, stream: str, partition: int = 0) -> list[str]:
    """The values of a plain partition, as any Kafka consumer reads them."""
    return [v.decode() for v in kafka.read_raw(spark, servers, stream, partition)]


def control_shape(spark, servers: str, stream: str, partition: int = 0) -> list[object]:
    """The control messages of an intermediate partition: ("wm", ms after T0) or the kind's name."""
    kinds = {2: "eos", 3: "idle", 4: "active"}
    return [
        ("wm", c["timestamp"] - T0) if t == 1 else kinds[t]  # type: ignore[index]
        for t, c in raw_records(spark, servers, stream, partition)
        if t != 0
    ]


def real_time_trigger(writer, duration: str):
    """``trigger(realTime=duration)``; PySpark 4.1 has real-time mode on the JVM only (its Python
    ``trigger`` came in 4.2), so there the JVM's ``Trigger.RealTime`` is set through py4j."""
    if "realTime" in inspect.signature(type(writer).trigger).parameters:
        return writer.trigger(realTime=duration)
    jvm = writer._spark._jvm  # noqa: SLF001
    writer._jwrite = writer._jwrite.trigger(jvm.org.apache.spark.sql.streaming.Trigger.RealTime(duration))  # noqa: SLF001
    return writer


def start_real_time(df, servers: str, out: str, checkpoint, duration: str = LONG, name: str | None = None, **sink):
    writer = (
        df.writeStream.format("streamctl")
        .options(**options.sink(servers, out, **sink))
        .outputMode("update")
        .option("checkpointLocation", str(checkpoint))
        # Spark 4.3 tracks progress asynchronously in real-time mode and admits only its own sinks for it.
        .option("asyncProgressTrackingEnabled", "false")
    )
    writer = real_time_trigger(writer, duration)
    if name is not None:
        writer = writer.queryName(name)
    return writer.start()


@pytest.mark.smoke
@pytest.mark.skipif(
    tuple(int(p) for p in pyspark.__version__.split(".")[:2]) < (4, 1), reason="real-time mode came in Spark 4.1"
)
def test_a_plain_stream_is_read_continuously_within_one_batch_and_written_plain(
    spark, servers, make_stream, tmp_path, real_time
):
    src, out = make_stream(), make_stream(suffix="out")
    kafka.produce(spark, servers, src, [b"a0", b"a1", b"a2"])
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [src], starting_offsets="earliest"))
        .load()
        .select(F.col("offset").cast("string").alias("key"), F.col("value"))
    )
    q = start_real_time(df, servers, out, tmp_path / "cp")  # the plain sink, as format("kafka")
    try:
        wait_for("the backlog reaches the sink", lambda: len(plain_values(spark, servers, out)) >= 3, q)
        kafka.produce(spark, servers, src, [b"b3", b"b4"])
        wait_for("later records reach the sink", lambda: len(plain_values(spark, servers, out)) >= 5, q)
        # Both arrived inside the query's first batch: it lasts ten minutes and none has ended.
        assert committed_batches(tmp_path / "cp") == 0
        assert q.exception() is None
        # What any Kafka consumer reads: the key and value as given, no framing, no control messages.
        assert [(k, v) for k, v, _ in kafka.read_records(spark, servers, out, 0)] == [
            (b"0", b"a0"),
            (b"1", b"a1"),
            (b"2", b"a2"),
            (b"3", b"b3"),
            (b"4", b"b4"),
        ]
    finally:
        q.stop()


def group_offsets(servers: str, group: str) -> dict[int, int]:
    """The group's committed offset per partition, as ``kafka-consumer-groups --describe`` shows it."""
    return {p: current for p, (current, _, _) in kafka.consumer_group_lag(servers, group).items()}


@pytest.mark.skipif(
    tuple(int(p) for p in pyspark.__version__.split(".")[:2]) < (4, 1), reason="real-time mode came in Spark 4.1"
)
def test_commit_offsets_follows_the_readers_within_a_real_time_batch(spark, servers, make_stream, tmp_path, real_time):
    """Option commitOffsets in real-time mode: the consumer group follows what the readers read while
    the batch runs (Spark's executor heartbeats carry their positions), not only when it ends."""
    src, out = make_stream(partitions=2), make_stream(suffix="out")
    group = f"monitor-{src}"
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [src], starting_offsets="earliest", kafka={"group.id": group}))
        .option("commitOffsets", "true")
        .load()
        .select(F.col("offset").cast("string").alias("key"), F.col("value"))
    )
    q = start_real_time(df, servers, out, tmp_path / "cp")
    try:
        kafka.produce(spark, servers, src, [b"a%d" % i for i in range(10)], partitions=[i % 2 for i in range(10)])
        wait_for("the group at the records read", lambda: group_offsets(servers, group) == {0: 5, 1: 5}, q)
        kafka.produce(spark, servers, src, [b"b%d" % i for i in range(6)], partitions=[i % 2 for i in range(6)])
        wait_for("the group at the later records", lambda: group_offsets(servers, group) == {0: 8, 1: 8}, q)
        # Both within the query's first batch: it lasts ten minutes and none has ended.
        assert committed_batches(tmp_path / "cp") == 0
        wait_for("every record at the sink", lambda: len(plain_values(spark, servers, out)) == 16, q)
    finally:
        q.stop()


def offset_value(df):
    text = F.concat_ws(":", "topic", F.col("offset").cast("string"), F.col("value").cast("string"))
    return df.select(text.alias("value"))


def test_bootstrap_chooser_order_and_a_startpoint_that_waits_for_the_next_start(
    spark, servers, make_stream, tmp_path, real_time
):
    rates, orders, out = make_stream(suffix="rates"), make_stream(suffix="orders"), make_stream(suffix="out")
    kafka.produce(spark, servers, orders, [b"o0", b"o1", b"o2", b"o3"])
    kafka.produce(spark, servers, rates, [b"r0", b"r1", b"r2"])
    cp = tmp_path / "cp"
    # Set before the first start: the query begins orders at offset 2.
    StartpointManager(spark, checkpoint=str(cp)).set(orders, 0, Startpoint.specific(2))
    df = offset_value(
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [rates, orders], starting_offsets="earliest"))
        .options(**options.bootstrap(rates))
        .load()
    )
    q = start_real_time(df, servers, out, cp, duration=SHORT)
    try:
        wait_for("five records reach the sink", lambda: len(plain_values(spark, servers, out)) >= 5, q)
        # One task reads both streams (same partition number); the bootstrap stream goes first.
        assert plain_values(spark, servers, out) == [
            f"{rates}:0:r0",
            f"{rates}:1:r1",
            f"{rates}:2:r2",
            f"{orders}:2:o2",
            f"{orders}:3:o3",
        ]
        # A startpoint set while the query runs waits for its next start, batch boundaries or not.
        StartpointManager(spark, checkpoint=str(cp)).set(orders, 0, Startpoint.oldest())
        before = committed_batches(cp)
        wait_for("two more batches end", lambda: committed_batches(cp) >= before + 2, q)
        kafka.produce(spark, servers, orders, [b"o4"])
        wait_for("o4 reaches the sink", lambda: len(plain_values(spark, servers, out)) >= 6, q)
        assert plain_values(spark, servers, out)[5:] == [f"{orders}:4:o4"]
    finally:
        q.stop()
    q = start_real_time(df, servers, out, cp, duration=SHORT)
    try:
        wait_for("orders is read again from its oldest record", lambda: len(plain_values(spark, servers, out)) >= 11, q)
        assert plain_values(spark, servers, out)[6:] == [f"{orders}:{i}:o{i}" for i in range(5)]
        wait_for(
            "the applied startpoint is deleted once its batch is committed",
            lambda: StartpointManager(spark, checkpoint=str(cp)).list() == [],
            q,
        )
    finally:
        q.stop()


def chosen_order(spark, servers: str, make_stream, tmp_path, streams: list[str], count: int, *chooser: dict[str, str]):
    """Starts a real-time query over ``streams`` (backlogs already there, all partitions 0: one task)
    with the ``chooser`` options; returns ``stream:offset:timestamp-T0`` of the first ``count`` records
    in the order the task processed them (one writer, one output partition: the sink keeps it)."""
    out = make_stream(suffix="out")
    source = options.source(servers, streams, starting_offsets="earliest")
    reader = spark.readStream.format("streamctl").options(**source)
    for opts in chooser:
        reader = reader.options(**opts)
    ts = (F.unix_millis("timestamp") - F.lit(T0)).cast("string")
    df = reader.load().select(F.concat_ws(":", "topic", F.col("offset").cast("string"), ts).alias("value"))
    q = start_real_time(df, servers, out, tmp_path / "cp", duration=SHORT)
    try:
        wait_for(f"{count} records reach the sink", lambda: len(plain_values(spark, servers, out)) >= count, q)
        return plain_values(spark, servers, out)
    finally:
        q.stop()


def streams_of(order: list[str]) -> list[str]:
    return [v.split(":")[0] for v in order]


def test_time_aligned_chooser_merges_streams_in_timestamp_order(spark, servers, make_stream, tmp_path, real_time):
    dense, sparse = make_stream(suffix="dense"), make_stream(suffix="sparse")
    # Distinct timestamps, the dense stream three times as dense: round-robin would interleave them 1:1.
    dense_ts = [T0 + 2 * i for i in range(30)]
    sparse_ts = [T0 + 6 * i + 1 for i in range(10)]
    kafka.produce(spark, servers, dense, [b"d"] * 30, timestamps=dense_ts)
    kafka.produce(spark, servers, sparse, [b"s"] * 10, timestamps=sparse_ts)

    order = chosen_order(spark, servers, make_stream, tmp_path, [dense, sparse], 40, options.time_aligned())

    assert [int(v.split(":")[2]) for v in order] == sorted(t - T0 for t in dense_ts + sparse_ts)


def test_priority_chooser_reads_the_high_tier_first(spark, servers, make_stream, tmp_path, real_time):
    backfill, live = make_stream(suffix="backfill"), make_stream(suffix="live")
    kafka.produce(spark, servers, backfill, [b"b"] * 5)
    kafka.produce(spark, servers, live, [b"l"] * 5)

    order = streams_of(
        chosen_order(spark, servers, make_stream, tmp_path, [backfill, live], 10, options.priority(live, 10))
    )

    # One task reads both (partitions 0): the backfill waits while the live stream has records.
    assert order == [live] * 5 + [backfill] * 5


def test_batching_chooser_reads_runs_of_one_partition(spark, servers, make_stream, tmp_path, real_time):
    a, b = make_stream(suffix="a"), make_stream(suffix="b")
    kafka.produce(spark, servers, a, [b"a"] * 6)
    kafka.produce(spark, servers, b, [b"b"] * 6)

    order = streams_of(chosen_order(spark, servers, make_stream, tmp_path, [a, b], 12, options.batch_size(3)))

    # Runs of three of one partition, alternating (round-robin alone would alternate record by record).
    runs = [order[i : i + 3] for i in range(0, 12, 3)]
    assert all(len(set(r)) == 1 for r in runs), order
    assert [r[0] for r in runs] in ([a, b, a, b], [b, a, b, a]), order


def test_a_user_chooser_class_orders_the_task(spark, servers, make_stream, tmp_path, real_time):
    first, second = make_stream(suffix="first"), make_stream(suffix="second")
    kafka.produce(spark, servers, first, [b"f"] * 4)
    kafka.produce(spark, servers, second, [b"s"] * 4)

    # The example chooser (streamctl-testing) prefers streams in the order of its option 'order'.
    example = options.chooser_class("streamctl.testing.examples.StreamOrderChooser", {"order": f"{second},{first}"})
    order = streams_of(chosen_order(spark, servers, make_stream, tmp_path, [first, second], 8, example))

    assert order == [second] * 4 + [first] * 4


def test_new_partitions_are_read_from_the_next_batch(spark, servers, make_stream, tmp_path, real_time):
    src, out = make_stream(), make_stream(suffix="out")
    kafka.produce(spark, servers, src, [b"a"])
    df = offset_value(
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [src], starting_offsets="earliest"))
        .option("partition.check.interval", "1s")
        .load()
    )
    q = start_real_time(df, servers, out, tmp_path / "cp", duration=SHORT)
    try:
        wait_for("the first record reaches the sink", lambda: len(plain_values(spark, servers, out)) >= 1, q)
        kafka.grow_stream(spark, servers, src, 2)
        grown_during = committed_batches(tmp_path / "cp")
        kafka.produce(spark, servers, src, [b"b"], partitions=[1])
        wait_for("the new partition's record reaches the sink", lambda: len(plain_values(spark, servers, out)) >= 2, q)
        assert plain_values(spark, servers, out) == [f"{src}:0:a", f"{src}:0:b"]
        # Real-time batches are logged as they end: the one running as the stream grew has ended by
        # the time the new partition's record is read, in a batch after it.
        assert committed_batches(tmp_path / "cp") > grown_during, "read in a later batch than the one it grew in"
    finally:
        q.stop()


def with_watermark(df):
    """Value and the row's watermark (ms after T0, or '-'), as text."""
    wm = F.coalesce(((F.col("watermark").cast("double") * 1000).cast("long") - F.lit(T0)).cast("string"), F.lit("-"))
    return df.select(F.concat_ws("|", F.col("value").cast("string"), wm).alias("value"))


def test_rows_carry_the_watermark_as_control_messages_arrive_and_end_of_stream_ends_the_query(
    spark, servers, make_stream, tmp_path, real_time
):
    mid, out = make_stream(suffix="mid"), make_stream(suffix="out")
    df = with_watermark(
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [mid], starting_offsets="earliest"))
        .options(**options.intermediate(mid))
        .load()
    )
    q = start_real_time(
        df, servers, out, tmp_path / "cp", name=f"rt_{abs(hash(mid))}", intermediate=True, watermark_interval="50ms"
    )

    def produce(value: bytes) -> None:
        control.produce_framed(spark, servers, mid, [value])

    def outputs() -> list[str]:
        return user_values(spark, servers, out)

    try:
        produce(b"x1")
        wait_for("x1", lambda: len(outputs()) >= 1, q)
        control.send_watermark(spark, servers, mid, "p0", 2, T0 + 10_000)
        control.send_watermark(spark, servers, mid, "p1", 2, T0 + 20_000)
        produce(b"x2")
        wait_for("x2", lambda: len(outputs()) >= 2, q)
        control.send_watermark(spark, servers, mid, "p0", 2, T0 + 30_000)
        produce(b"x3")
        wait_for("x3", lambda: len(outputs()) >= 3, q)
        # Every row carries the reconciled watermark (the least over both producers) as of its record.
        assert outputs() == ["x1|-", "x2|10000", "x3|20000"]
        # The sink sends the query's watermark on at its interval, within the batch.
        wait_for("the watermark goes downstream", lambda: ("wm", 20_000) in control_shape(spark, servers, out), q)
        assert committed_batches(tmp_path / "cp") == 0  # all within the first (ten-minute) batch
        control.send_end_of_stream(spark, servers, mid, "p0", 2)
        control.send_end_of_stream(spark, servers, mid, "p1", 2)
        assert q.awaitTermination(180), "the query did not stop at end-of-stream"
        assert q.exception() is None
        assert control_shape(spark, servers, out)[-1] == "eos"
    finally:
        q.stop()


def test_a_query_kept_running_at_end_of_stream_waits_out_its_batches(spark, servers, make_stream, tmp_path, real_time):
    """stop.on.end.of.stream=false: once every input ended, each batch still lasts its duration,
    as an idle one does; ended at once, Spark would start batch after batch without a pause."""
    mid, out = make_stream(suffix="mid"), make_stream(suffix="out")
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [mid], starting_offsets="earliest", stop_on_end_of_stream=False))
        .options(**options.intermediate(mid))
        .load()
        .select("value")
    )
    control.produce_framed(spark, servers, mid, [b"x"])
    control.send_end_of_stream(spark, servers, mid, "p0", 1)
    q = start_real_time(df, servers, out, tmp_path / "cp", duration="3 seconds")
    try:
        wait_for("three batches", lambda: committed_batches(tmp_path / "cp") >= 3, q, timeout=120)
        took = [p["durationMs"]["triggerExecution"] for p in q.recentProgress if p["batchId"] >= 1]
        assert took and min(took) >= 2500, f"batches at end-of-stream ended early: {took} ms"
        assert q.isActive and plain_values(spark, servers, out) == ["x"]
    finally:
        q.stop()


def test_a_bounded_pipeline_of_two_real_time_queries_ends_by_itself(spark, servers, make_stream, tmp_path, real_time):
    a, b, c = make_stream(suffix="a"), make_stream(suffix="b"), make_stream(suffix="c")

    def stage(src: str, dst: str, name: str):
        df = (
            spark.readStream.format("streamctl")
            .options(**options.source(servers, [src], starting_offsets="earliest"))
            .options(**options.intermediate(src))
            .load()
            .select("value")
        )
        name = f"{name}_{abs(hash(a))}"
        return start_real_time(
            df, servers, dst, tmp_path / name, name=name, intermediate=True, watermark_interval="50ms"
        )

    first, second = stage(a, b, "first"), stage(b, c, "second")
    try:
        control.produce_framed(spark, servers, a, [b"v0", b"v1", b"v2"])
        control.send_watermark(spark, servers, a, "src", 1, T0 + 5_000)
        control.produce_framed(spark, servers, a, [b"v3"])
        control.send_end_of_stream(spark, servers, a, "src", 1)
        assert first.awaitTermination(180), "the first query did not stop at end-of-stream"
        assert second.awaitTermination(180), "the second query did not stop at end-of-stream"
        assert first.exception() is None and second.exception() is None
        shape = control_shape(spark, servers, c)
        assert user_values(spark, servers, c) == ["v0", "v1", "v2", "v3"]
        assert ("wm", 5_000) in shape, f"the watermark did not cross both queries: {shape}"
        assert shape[-1] == "eos"
    finally:
        first.stop()
        second.stop()


def last_committed_offset(checkpoint: Path, stream: str) -> int:
    """The next offset of ``stream`` partition 0 in the offset log of the last committed batch (read by the JVM)."""
    committed = streamctl.describe(str(checkpoint)).partitions
    return next(p.committed for p in committed if p.stream == stream and p.partition == 0)


def produce_values(spark, servers: str, stream: str, numbers: range) -> None:
    kafka.produce(spark, servers, stream, [f"v{i}".encode() for i in numbers])


def test_a_killed_real_time_query_resumes_from_exactly_the_offsets_it_logged(
    spark, servers, make_stream, tmp_path, real_time
):
    src, out = make_stream(), make_stream(suffix="out")
    cp = tmp_path / "cp"
    produce_values(spark, servers, src, range(20))
    more = []

    def copied_more_within_a_batch() -> bool:
        """After two committed batches, five more records; killed as soon as they are copied (mid-batch)."""
        copied = len(plain_values(spark, servers, out))
        if not more and copied >= 20 and committed_batches(cp) >= 2:
            produce_values(spark, servers, src, range(20, 25))
            more.append(True)
        return bool(more) and copied >= 25

    run_job_until(
        "_real_time_job.py",
        [servers, src, out, str(cp)],
        copied_more_within_a_batch,
        timeout=240,
        died="the real-time job ended by itself",
        stuck="the real-time job copied nothing",
        log=tmp_path / "job.log",
    )
    before = plain_values(spark, servers, out)
    resume = last_committed_offset(cp, src)
    assert before[:25] == [f"{i}:v{i}" for i in range(25)]
    produce_values(spark, servers, src, range(25, 30))
    q = start_copy(spark, servers, src, out, str(cp), SHORT)
    try:
        expected = len(before) + 30 - resume
        wait_for("the restarted query copies the rest", lambda: len(plain_values(spark, servers, out)) >= expected, q)
    finally:
        q.stop()
    # The restart reads again from the last logged end offset: records after it that the killed
    # run had written already are written again (at-least-once, as Spark's Kafka sink), none is lost.
    assert plain_values(spark, servers, out)[len(before) :] == [f"{i}:v{i}" for i in range(resume, 30)]


def test_with_a_sink_on_sparks_list_the_source_runs_under_sparks_background_checkpointing(
    spark, servers, make_stream, tmp_path, real_time
):
    """Spark 4.3 tracks a stateless real-time query's progress in the background by default when
    its sink is one of its own (here foreach): the streamctl source then runs under Spark's
    asynchronous offset and commit logs, commits and resumes where it left off."""
    src = make_stream(partitions=2)
    cp, written = tmp_path / "cp", tmp_path / "rows"
    written.mkdir()

    def produce(numbers: range) -> None:  # v0, v2, v4 to partition 0; v1, v3, v5 to partition 1
        kafka.produce(spark, servers, src, [f"v{i}".encode() for i in numbers], partitions=[i % 2 for i in numbers])

    produce(range(4))

    def write(row) -> None:  # idempotent: one file per record, replaced when replayed
        (written / f"{row.partition}-{row.offset}").write_bytes(row.value)

    def start():
        source = options.source(servers, [src], starting_offsets="earliest")
        rows = spark.readStream.format("streamctl").options(**source)
        return (
            rows.load()
            .writeStream.foreach(write)
            .outputMode("update")
            .option("checkpointLocation", str(cp))
            .trigger(realTime=SHORT)
            .start()
        )

    def files() -> dict[str, str]:
        return {f.name: f.read_text() for f in written.iterdir()}

    q = start()
    try:
        # No asyncProgressTrackingEnabled option: Spark's default chose background checkpointing
        # (pyspark has no public handle on the query's execution, hence its py4j object).
        execution = q._jsq.streamingQuery().getClass().getSimpleName()  # noqa: SLF001
        assert execution == "AsyncProgressTrackingMicroBatchExecution"
        wait_for("the backlog is written", lambda: len(files()) >= 4, q)
        wait_for("a batch commits", lambda: committed_batches(cp) >= 1, q)
    finally:
        q.stop()
    produce(range(4, 6))
    q = start()
    try:
        wait_for("the restarted query writes the rest", lambda: len(files()) >= 6, q)
        assert q.exception() is None
    finally:
        q.stop()
    # Every record once by position (a replay rewrites the same file), none lost across the restart.
    assert files() == {"0-0": "v0", "0-1": "v2", "0-2": "v4", "1-0": "v1", "1-1": "v3", "1-2": "v5"}


def test_end_of_stream_takes_effect_at_the_next_batch_boundary(spark, servers, make_stream, tmp_path, real_time):
    src, out = make_stream(), make_stream(suffix="out")
    produce_values(spark, servers, src, range(3))
    source = options.source(servers, [src], starting_offsets="earliest")
    df = offset_value(spark.readStream.format("streamctl").options(**source).load())
    q = start_real_time(df, servers, out, tmp_path / "cp", duration=SHORT, intermediate=True)
    try:
        wait_for("the records reach the sink", lambda: len(user_values(spark, servers, out)) >= 3, q)
        streamctl.end_of_stream(q)
        assert not q.isActive
        # The running batch ended and committed at its boundary; no batch was planned after it.
        assert planned_batches(tmp_path / "cp") == committed_batches(tmp_path / "cp") >= 1
        assert control_shape(spark, servers, out)[-1] == "eos"
        assert user_values(spark, servers, out) == [f"{src}:{i}:v{i}" for i in range(3)]
    finally:
        q.stop()


def test_a_record_budget_is_refused_in_real_time_mode(spark, servers, make_stream, tmp_path, real_time):
    src, out = make_stream(), make_stream(suffix="out")
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [src], max_records_per_batch=100))
        .load()
        .select("value")
    )
    q = start_real_time(df, servers, out, tmp_path / "cp")
    refused = re.escape("Option 'maxOffsetsPerTrigger' cannot apply in real-time mode")
    with pytest.raises(StreamingQueryException, match=refused):
        q.awaitTermination(120)


def test_two_real_time_queries_side_by_side_keep_their_own_consumers(spark, servers, make_stream, tmp_path, real_time):
    # Both queries have a task `Partition 0` and hold their readers at once for every batch: the
    # executor's consumer pool must give each its own consumer back at every batch boundary,
    # instead of closing one query's consumer and creating a new one for it at every batch.
    streams = [make_stream(suffix=s) for s in ("a", "b")]
    queries = []
    try:
        for s in streams:
            kafka.produce(spark, servers, s, [b"x"])
            df = offset_value(
                spark.readStream.format("streamctl")
                .options(**options.source(servers, [s], starting_offsets="earliest"))
                .load()
            )
            queries.append(start_real_time(df, servers, make_stream(suffix="out"), tmp_path / s, duration=SHORT))

        def batches(q) -> list[dict]:
            return [p for p in q.recentProgress if p.sources and "consumersCreated" in p.sources[0].metrics]

        wait_for("four batches of each query", lambda: all(len(batches(q)) >= 4 for q in queries), *queries)
        for q in queries:
            created = [int(p.sources[0].metrics["consumersCreated"]) for p in batches(q)]
            reused = [int(p.sources[0].metrics["consumersReused"]) for p in batches(q)]
            assert created[0] + reused[0] == 1, created
            assert created[1:] == [0] * (len(created) - 1), f"a consumer was created again after batch 0: {created}"
            assert reused[1:] == [1] * (len(reused) - 1), reused
    finally:
        for q in queries:
            q.stop()


def test_stopping_a_real_time_query_logs_no_error(spark, servers, make_stream, tmp_path, real_time):
    """A stop interrupts the tasks that are reading and writing: expected, so not an ERROR."""
    src, out = make_stream(), make_stream(suffix="out")
    kafka.produce(spark, servers, src, [b"a0", b"a1"])
    df = spark.readStream.format("streamctl").options(**options.source(servers, [src], starting_offsets="earliest"))
    with driver_log(spark, "WARN") as log:
        q = start_real_time(df.load().select("value"), servers, out, tmp_path / "cp", intermediate=True)
        try:
            wait_for("the backlog reaches the sink", lambda: len(user_values(spark, servers, out)) >= 2, q)
        finally:
            q.stop()
        # The interrupted tasks end after stop() returned: wait until no stage runs any more.
        tracker = spark.sparkContext.statusTracker()
        wait_for("the query's tasks ended", lambda: not tracker.getActiveStageIds())
        text = log()
    # Spark's driver logs the cancelled job of any sink at ERROR ("Data source write support ...
    # is aborting"); what the tasks and Kafka clients log is streamctl's.
    errors = [
        line
        for line in text.splitlines()
        if line.startswith("ERROR") and not line.startswith("ERROR WriteToDataSourceV2Exec")
    ]
    assert errors == [], text[-5000:]
    assert "InterruptException" not in text and "Aborting task" not in text, text[-5000:]
