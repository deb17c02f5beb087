"""The sending side of in-band control on a real broker: control messages reach every partition a
stream has, every run that should end its stream does, and an idle producer holds nobody back."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from pyspark.sql import functions as F

import streamctl
from streamctl import StreamctlException, options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm

from conftest import (
    T0,
    committed_batches,
    control_metrics,
    forwarding_query,
    idle_triggers,
    planned_batches,
    raw_records,
    read_intermediate,
    wait_for,
)

SECOND = 1_000


def _produce(spark, servers, stream: str, seconds: range) -> None:
    """One record per event-time second (key and value the second), written now."""
    kafka.produce(
        spark,
        servers,
        stream,
        [str(s).encode() for s in seconds],
        keys=[str(s).encode() for s in seconds],
        timestamps=[T0 + s * SECOND for s in seconds],
    )


def _started(spark, servers, src: str, mid: str, checkpoint, interval: str = "100 milliseconds"):
    return forwarding_query(spark, servers, src, mid, checkpoint).trigger(processingTime=interval).start()


def _collecting_reader(spark, servers, mid: str, checkpoint, rows: list, check_interval: str, trigger: str):
    """A reader of intermediate ``mid`` that adds each batch's (partition, value) rows to ``rows``."""
    return (
        read_intermediate(spark, servers, mid, options.partition_check_interval(check_interval))
        .writeStream.foreachBatch(lambda b, _i: rows.extend(b.select("partition", "value").collect()))
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime=trigger)
        .start()
    )


def _kinds(spark, servers, stream: str, partition: int) -> list[int]:
    return [t for t, _ in raw_records(spark, servers, stream, partition)]


def test_control_messages_reach_partitions_added_while_the_writer_runs(spark, servers, make_stream, tmp_path):
    src, mid = make_stream(2, "src"), make_stream(2, "mid")
    _produce(spark, servers, src, range(10))
    writer = _started(spark, servers, src, mid, tmp_path / "w", "500 milliseconds")
    rows: list = []
    reader = _collecting_reader(spark, servers, mid, tmp_path / "r", rows, "500ms", "200 milliseconds")
    try:
        writer.processAllAvailable()
        kafka.grow_stream(spark, servers, mid, 4)
        _produce(spark, servers, src, range(10, 20))
        writer.processAllAvailable()

        def reader_sees_four_partitions_and_a_watermark() -> bool:
            p = reader.lastProgress
            m = control_metrics(p) if p and p["sources"][0]["metrics"] else None
            return m is not None and len(m["control"]) == 4 and m["watermark"] is not None

        # The writer's watermark reached the new partitions too, so the reader's is defined.
        wait_for(
            "a reader's watermark after the growth",
            reader_sees_four_partitions_and_a_watermark,
            reader,
            writer,
            timeout=90,
        )
        streamctl.end_of_stream(writer)
        assert reader.awaitTermination(120), "the reader never saw end-of-stream on every partition"
        assert reader.exception() is None
    finally:
        for q in (writer, reader):
            if q.isActive:
                q.stop()
    for p in range(4):
        kinds = _kinds(spark, servers, mid, p)
        assert kinds[-1] == 2, f"partition {p} ends with end-of-stream"
        assert 1 in kinds, f"partition {p} got a watermark"
    assert sorted(int(r.value) for r in rows) == list(range(20))


def test_a_reader_ends_a_stream_that_grew_after_one_of_its_producers_ended(spark, servers, make_stream, tmp_path):
    """Producer A ends while mid has 2 partitions; mid grows to 4; producer B writes all 4 and ends. A never
    wrote partitions 2 and 3 and never will: the reader counts it ended there and stops by itself."""
    src_a, src_b, mid = make_stream(1, "a"), make_stream(1, "b"), make_stream(2, "mid")

    def producer(name: str, src: str) -> None:
        q = (
            forwarding_query(spark, servers, src, mid, tmp_path / name, producer_name=name, producer_count=2)
            .trigger(availableNow=True)
            .start()
        )
        assert q.awaitTermination(120)
        assert q.exception() is None

    _produce(spark, servers, src_a, range(6))
    producer("A", src_a)
    kafka.grow_stream(spark, servers, mid, 4)
    _produce(spark, servers, src_b, range(6, 20))
    producer("B", src_b)
    ended_a = [r for t, r in raw_records(spark, servers, mid, 0) if t == 2 and r["taskName"] == "A"]  # type: ignore[index]
    assert [r["partitions"] for r in ended_a] == [2], "A's end-of-stream says the 2 partitions it went to"  # type: ignore[index]
    assert all(
        [r["taskName"] for t, r in raw_records(spark, servers, mid, p) if t == 2] == ["B"]  # type: ignore[index]
        for p in (2, 3)
    ), "only B ended the new partitions"

    rows: list = []
    reader = _collecting_reader(spark, servers, mid, tmp_path / "r", rows, "200ms", "100 milliseconds")
    try:
        assert reader.awaitTermination(120), "the reader never saw end-of-stream on the partitions A never wrote"
        assert reader.exception() is None
    finally:
        if reader.isActive:
            reader.stop()
    assert sorted(int(r.value) for r in rows) == list(range(20))
    assert {r.partition for r in rows} >= {2, 3}, "B's records on the new partitions were read"


@pytest.mark.parametrize("restart", ["available_now", "end_of_stream"])
def test_a_restarted_writer_with_nothing_to_write_still_ends_its_stream(spark, servers, make_stream, tmp_path, restart):
    src, mid = make_stream(1, "src"), make_stream(2, "mid")
    _produce(spark, servers, src, range(5))
    first = _started(spark, servers, src, mid, tmp_path / "w")
    first.processAllAvailable()
    first.stop()  # e.g. a crash after its last commit: the stream has not ended
    assert all(2 not in _kinds(spark, servers, mid, p) for p in range(2))

    writer = forwarding_query(spark, servers, src, mid, tmp_path / "w")
    if restart == "available_now":
        again = writer.trigger(availableNow=True).start()
        assert again.awaitTermination(120)
        assert again.exception() is None
    else:
        again = writer.trigger(processingTime="100 milliseconds").start()
        idle_triggers(again)
        streamctl.end_of_stream(again)
    for p in range(2):
        assert _kinds(spark, servers, mid, p)[-1] == 2, f"partition {p} ends with end-of-stream"
    assert sum(_kinds(spark, servers, mid, p).count(0) for p in range(2)) == 5, "the restart wrote nothing again"


def test_a_scheduled_available_now_run_that_keeps_its_stream_open_ends_idle(spark, servers, make_stream, tmp_path):
    src, mid = make_stream(1, "src"), make_stream(1, "mid")
    _produce(spark, servers, src, range(10))
    q = (
        forwarding_query(spark, servers, src, mid, tmp_path / "w", end_of_stream_after_available_now=False)
        .trigger(availableNow=True)
        .start()
    )
    assert q.awaitTermination(120)
    assert q.exception() is None
    records = raw_records(spark, servers, mid, 0)
    kinds = [t for t, _ in records]
    assert 2 not in kinds and kinds[-1] == 3, "no end-of-stream: idle until the next run, so it holds nobody back"
    assert records[-1][1]["timestamp"] == T0 + 4 * SECOND, "with the watermark it sent last"  # type: ignore[index]


def test_end_of_stream_while_the_query_is_still_starting_ends_it_before_any_batch(
    spark, servers, make_stream, tmp_path
):
    src, mid = make_stream(1, "src"), make_stream(2, "mid")
    _produce(spark, servers, src, range(20))
    name = f"starting_{abs(hash(mid))}"

    def end_it_as_soon_as_it_is_registered():
        # Spark lists a query as active before its thread has set anything up: the earliest moment
        # a user can call end_of_stream, and the race the call must win.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            q = next((q for q in spark.streams.active if q.name == name), None)
            if q is not None:
                streamctl.end_of_stream(q)
                return q
        raise AssertionError("the query never showed up as active")

    with ThreadPoolExecutor(1) as pool:
        ender = pool.submit(end_it_as_soon_as_it_is_registered)
        writer = forwarding_query(spark, servers, src, mid, tmp_path / "w").queryName(name)
        writer.trigger(processingTime="100 milliseconds").start()
        q = ender.result(timeout=180)  # raises what end_of_stream raised
    assert not q.isActive and q.exception() is None
    # Where the request lands is up to the scheduler: before the first batch is planned the source
    # admits nothing (PlannerTest pins that without a race); the one batch planned before it (the
    # call comes within milliseconds of the start, a trigger is 100 ms) still runs and writes its 5
    # records. Either way no batch after the request, and end-of-stream is the last message of
    # every partition, once.
    records = [raw_records(spark, servers, mid, p) for p in range(2)]
    for partition in records:
        kinds = [t for t, _ in partition]
        assert kinds.count(2) == 1 and kinds[-1] == 2, kinds
    written = sorted(int(c) for partition in records for t, c in partition if t == 0)  # type: ignore[arg-type]
    assert written in ([], [0, 1, 2, 3, 4]), written


def test_end_of_stream_raises_naming_the_query_when_it_cannot_send(spark, servers, make_stream, tmp_path):
    src, mid = make_stream(1, "src"), make_stream(1, "mid")
    _produce(spark, servers, src, range(3))
    q = (
        forwarding_query(spark, servers, src, mid, tmp_path / "w")
        .queryName(f"unended_{abs(hash(mid))}")
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    q.processAllAvailable()
    kafka.delete_stream(spark, servers, mid)
    with pytest.raises(StreamctlException) as err:
        streamctl.end_of_stream(q)
    message = str(err.value)
    assert f"unended_{abs(hash(mid))}" in message and "end-of-stream was not sent" in message
    assert f"describing streams {mid}" in message and "does not exist" in message
    # The query stopped; ending it again is refused by the JVM's one check, naming it.
    assert not q.isActive
    with pytest.raises(StreamctlException, match=f"end_of_stream: query {q.id} .* is not running"):
        streamctl.end_of_stream(q)


def test_a_query_that_fails_while_ending_sends_nothing_and_is_forgotten(spark, servers, make_stream, tmp_path):
    """end_of_stream waits for the query to finish what it admitted; a query that fails meanwhile
    raises its error there, sends no end-of-stream (its output is not whole) and leaves no control
    behind in the session."""
    src, mid = make_stream(1, "src"), make_stream(1, "mid")
    _produce(spark, servers, src, range(3))
    latch = tmp_path / "fail-now"

    def poison(value: bytes) -> bytes:
        # Holds the poison record's batch until the test has asked for the end, so the query fails
        # while finishing, not before end_of_stream is called (nor is it ended before reading it).
        if value == b"poison":
            deadline = time.monotonic() + 120
            while not latch.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            raise ValueError("poison record")
        return value

    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [src], starting_offsets="earliest"))
        .load()
        .select(F.udf(poison, "binary", useArrow=False)("value").alias("value"))
    )
    cp = tmp_path / "w"
    q = (
        df.writeStream.format("streamctl")
        .options(**options.sink(servers, mid, intermediate=True))
        .option("checkpointLocation", str(cp))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    try:
        q.processAllAvailable()
        kafka.produce(spark, servers, src, [b"poison"])
        wait_for("the poison record's batch planned", lambda: planned_batches(cp) > committed_batches(cp), q)
        registry = jvm(spark).streamctl.spark.QueryControlRegistry
        with ThreadPoolExecutor(1) as pool:
            ending = pool.submit(streamctl.end_of_stream, q)
            wait_for("the end requested", lambda: registry.get(str(q.id)).get().run().endRequested(), timeout=60)
            latch.touch()
            with pytest.raises(Exception, match="poison record"):
                ending.result(timeout=120)
        assert not q.isActive
        kinds = [t for t, _ in raw_records(spark, servers, mid, 0)]
        assert kinds.count(0) == 3 and 2 not in kinds, f"the 3 records and no end-of-stream: {kinds}"
        assert jvm(spark).streamctl.spark.QueryControlRegistry.get(str(q.id)).isEmpty()
    finally:
        q.stop()


def test_an_idle_producer_holds_nobody_back_and_loses_nothing_when_it_resumes(spark, servers, make_stream, tmp_path):
    src_a, src_b, mid = make_stream(1, "a"), make_stream(1, "b"), make_stream(1, "mid")

    def producer(name: str, src: str):
        return (
            forwarding_query(
                spark,
                servers,
                src,
                mid,
                tmp_path / name,
                event_time_in_value=True,
                producer_name=name,
                producer_count=2,
                producer_idle_timeout="2s",
            )
            .trigger(processingTime="200 milliseconds")
            .start()
        )

    # Downstream: 10 s windows on the upstream watermark, with a delay covering the idle producer's gap.
    counts: dict[int, int] = {}

    def upsert(batch, _batch_id):
        for r in batch.collect():
            counts[int(r.window.start.timestamp() * 1000) - T0] = r["count"]

    events = read_intermediate(spark, servers, mid).select(
        F.timestamp_millis(F.split(F.col("value").cast("string"), ",")[0].cast("long")).alias("ts"), "watermark"
    )
    downstream = (
        streamctl.with_upstream_watermark(events, "ts", delay="120 seconds")
        .groupBy(F.window("ts", "10 seconds"))
        .count()
        .writeStream.outputMode("update")
        .foreachBatch(upsert)
        .option("checkpointLocation", str(tmp_path / "down"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    a, b = producer("A", src_a), producer("B", src_b)

    def watermark() -> int | None:
        p = downstream.lastProgress
        return control_metrics(p)["watermark"] if p and p["sources"][0]["metrics"] else None

    try:
        # Both producers write 0..9 s (two batches each, so each sends a watermark).
        for seconds in (range(5), range(5, 10)):
            _produce(spark, servers, src_a, seconds)
            _produce(spark, servers, src_b, seconds)
            a.processAllAvailable()
            b.processAllAvailable()
        wait_for(
            "a downstream watermark from both producers", lambda: watermark() is not None, downstream, a, b, timeout=90
        )
        quiet_at = watermark()
        assert quiet_at is not None and quiet_at < T0 + 10 * SECOND

        # B goes quiet; A goes on to 100 s. After B's idle timeout the downstream watermark follows A alone.
        for start in (20, 50, 80):
            _produce(spark, servers, src_a, range(start, start + 21))
            a.processAllAvailable()
        wait_for(
            "the downstream watermark past the quiet producer's",
            lambda: (watermark() or 0) >= T0 + 50 * SECOND,
            downstream,
            a,
            b,
            timeout=90,
        )
        ahead = watermark()
        assert ahead is not None and ahead >= T0 + 50 * SECOND

        # B resumes with event times far behind A's watermark, within the downstream delay: none is late.
        _produce(spark, servers, src_b, range(10, 15))
        b.processAllAvailable()
        wait_for(
            "B's rows in the downstream window", lambda: counts.get(10 * SECOND) == 5, downstream, a, b, timeout=90
        )
        marks = [control_metrics(p)["watermark"] for p in downstream.recentProgress if p["sources"][0]["metrics"]]
        defined = [m for m in marks if m is not None]
        assert defined == sorted(defined), "the downstream watermark never moved backwards"
        assert (watermark() or 0) >= ahead, "B's return did not pull the watermark back"
        assert counts[0] == 20, "0..9 s from both producers"
    finally:
        for q in (a, b, downstream):
            q.stop()

    # After its watermark B said it was idle, then active again before its new data (data carries
    # no producer name). On a loaded machine B may also say idle before its first record: 2 s can
    # pass between its start and its first data; that idle has no watermark to carry.
    b_controls = [(t, c) for t, c in raw_records(spark, servers, mid, 0) if t and c["taskName"] == "B"]
    kinds = [t for t, _ in b_controls]
    assert 1 in kinds, kinds
    after_watermark = kinds.index(1)
    quiet = kinds.index(3, after_watermark) if 3 in kinds[after_watermark:] else None
    assert quiet is not None and 4 in kinds[quiet:], kinds
    idle = b_controls[quiet][1]
    assert idle["taskCount"] == 2 and idle["version"] == 1 and idle["timestamp"] < T0 + 10 * SECOND
