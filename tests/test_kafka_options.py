"""format("streamctl") as a drop-in for format("kafka"), on a real broker: plain records out (read
back by a plain Kafka consumer), batch reads with Spark's offset options, Spark's subscription kinds,
minOffsetsPerTrigger. The row-for-row comparison with Spark's own connector: test_kafka_compat.py."""

from __future__ import annotations

import json
import re

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructField, StructType

from streamctl import Startpoint, StartpointManager, StreamctlException
from streamctl_testing import kafka

from conftest import driver_log, run_available_now, session_conf, wait_for

HEADERS = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


def _read(spark, servers, **opts):
    reader = spark.read.format("streamctl").option("kafka.bootstrap.servers", servers)
    return reader.options(**{k: str(v) for k, v in opts.items()}).load()


def test_plain_sink_writes_what_a_kafka_consumer_reads_byte_for_byte(spark, servers, make_stream):
    a = make_stream(partitions=2, suffix="a")
    b = make_stream(partitions=1, suffix="b")
    schema = StructType(
        [
            StructField("topic", StringType()),
            StructField("partition", IntegerType()),
            StructField("key", BinaryType()),
            StructField("value", BinaryType()),
            StructField("headers", HEADERS),
        ]
    )
    rows = [
        (a, 0, b"k1", b"\x00\x01raw", [("h", b"1"), ("n", None)]),
        (a, 1, b"k2", None, None),  # a tombstone
        (b, 0, None, b"to-b", None),
    ]
    # A per-row topic and partition, no save mode: as with format("kafka").
    spark.createDataFrame(rows, schema).coalesce(1).write.format("streamctl").option(
        "kafka.bootstrap.servers", servers
    ).save()
    assert kafka.read_records(spark, servers, a, 0) == [(b"k1", b"\x00\x01raw", [("h", b"1"), ("n", None)])]
    assert kafka.read_records(spark, servers, a, 1) == [(b"k2", None, [])]
    assert kafka.read_records(spark, servers, b, 0) == [(None, b"to-b", [])]

    # Option 'topic' overrides the column, as in Spark.
    spark.createDataFrame([(a, "x")], ["topic", "value"]).write.format("streamctl").option(
        "kafka.bootstrap.servers", servers
    ).option("topic", b).save()
    assert kafka.read_records(spark, servers, b, 0)[-1] == (None, b"x", [])
    with pytest.raises(Exception, match="needs a 'topic' column"):
        spark.createDataFrame([("x",)], ["value"]).write.format("streamctl").option(
            "kafka.bootstrap.servers", servers
        ).save()


def test_streaming_plain_sink_and_headers_round_trip(spark, servers, make_stream, tmp_path):
    src = make_stream(partitions=2, suffix="src")
    out = make_stream(partitions=2, suffix="out")
    kafka.produce_with_headers(spark, servers, src, b"with", [("trace", b"t-1")])
    kafka.produce(spark, servers, src, [b"v1", b"v2"], keys=[b"k", b"k"], partitions=[1, 1])
    df = (
        spark.readStream.format("streamctl")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", src)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .load()
    )
    q = (
        df.select("key", "value", "headers", "partition")
        .writeStream.format("streamctl")
        .option("kafka.bootstrap.servers", servers)
        .option("topic", out)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(180)
    assert q.exception() is None
    written = {p: kafka.read_records(spark, servers, out, p) for p in (0, 1)}
    # Each row went to its source partition (column 'partition'), in order; the unkeyed record may be in either.
    assert [r for r in written[1] if r[0] == b"k"] == [(b"k", b"v1", []), (b"k", b"v2", [])]
    assert [(v, h) for _, v, h in written[0] + written[1] if v == b"with"] == [(b"with", [("trace", b"t-1")])]


def test_batch_reads_take_sparks_offset_options_and_leave_startpoints_alone(spark, servers, make_stream, tmp_path):
    s = make_stream(partitions=2)
    n = 10
    kafka.produce(
        spark,
        servers,
        s,
        [f"v{i}".encode() for i in range(n)],
        partitions=[i % 2 for i in range(n)],
        timestamps=[1_700_000_000_000 + i for i in range(n)],
    )
    everything = _read(spark, servers, subscribe=s)
    assert everything.count() == n
    assert everything.columns == [
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
    ranged = _read(
        spark,
        servers,
        subscribe=s,
        startingOffsets=json.dumps({s: {"0": 1, "1": -2}}),
        endingOffsets=json.dumps({s: {"0": 3, "1": -1}}),
    )
    assert sorted((r.partition, r.offset) for r in ranged.collect()) == [(0, 1), (0, 2)] + [(1, o) for o in range(5)]
    # Timestamps: partition 0 holds 0, 2, 4, ...; partition 1 holds 1, 3, 5, ... (ms after the base).
    by_time = _read(
        spark,
        servers,
        subscribe=s,
        startingTimestamp=1_700_000_000_006,
        endingOffsetsByTimestamp=json.dumps({s: {"0": 1_700_000_000_008, "1": 1_700_000_000_100}}),
    )
    assert sorted(r.value for r in by_time.collect()) == [b"v6", b"v7", b"v9"]
    with pytest.raises(Exception, match="'startingOffsets' cannot be 'latest'"):
        _read(spark, servers, subscribe=s, startingOffsets="latest").collect()

    # A startpoint stored for a streaming query with the same store is neither applied nor deleted.
    manager = StartpointManager(spark, metadata_store_path=str(tmp_path / "store"), bootstrap_servers=servers)
    manager.set(s, 0, Startpoint.specific(4))
    assert _read(spark, servers, subscribe=s, **{"metadata.store.path": str(tmp_path / "store")}).count() == n
    assert [e.key for e in manager.list()] == [f"kafka/{s}/0"]


def test_assign_reads_only_the_given_partitions(spark, servers, make_stream, tmp_path):
    s = make_stream(partitions=3)
    kafka.produce(spark, servers, s, [f"v{i}".encode() for i in range(9)], partitions=[i % 3 for i in range(9)])
    assign = json.dumps({s: [0, 2]})
    df = (
        spark.readStream.format("streamctl")
        .option("kafka.bootstrap.servers", servers)
        .option("assign", assign)
        .option("startingOffsets", "earliest")
        .load()
    )
    assert sorted({(r.partition, r.task) for r in run_available_now(df, str(tmp_path / "cp"))}) == [
        (0, "Partition 0"),
        (2, "Partition 2"),
    ]
    assert {r.partition for r in _read(spark, servers, assign=assign).collect()} == {0, 2}
    missing = f"Partition 5 of stream '{s}' does not exist (option 'assign'): it has 3 partitions (0..2)"
    with pytest.raises(StreamctlException, match=re.escape(missing)):
        _read(spark, servers, assign=json.dumps({s: [0, 5]})).collect()


def test_subscribe_pattern_picks_up_a_topic_created_while_running(spark, servers, make_stream):
    first = make_stream(suffix="pat")
    prefix = first.rsplit("-", 1)[0]
    kafka.produce(spark, servers, first, [b"before"])
    seen: list[tuple[str, bytes]] = []
    q = (
        spark.readStream.format("streamctl")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribePattern", f"{prefix}-.*")
        .option("startingOffsets", "earliest")
        .option("partition.check.interval", "500ms")
        .load()
        .writeStream.foreachBatch(lambda b, _i: seen.extend((r.topic, r.value) for r in b.collect()))
        .trigger(processingTime="300 milliseconds")
        .start()
    )
    try:
        wait_for("the first topic's record", lambda: (first, b"before") in seen, q)
        second = f"{prefix}-late"
        kafka.create_stream(spark, servers, second, 2)
        kafka.produce(spark, servers, second, [b"late-0", b"late-1"], partitions=[0, 1])
        # A new topic starts at its first offset, as Spark's subscribePattern does.
        wait_for("the new topic's records", lambda: {(second, b"late-0"), (second, b"late-1")} <= set(seen), q)
    finally:
        q.stop()
    assert q.exception() is None


def test_min_offsets_per_trigger_waits_for_enough_records(spark, servers, make_stream):
    s = make_stream()
    batches: list[int] = []
    # Triggers without a batch report progress every 10 s by default; the test counts such triggers.
    with session_conf(spark, {"spark.sql.streaming.noDataProgressEventInterval": "200ms"}):
        q = (
            spark.readStream.format("streamctl")
            .option("kafka.bootstrap.servers", servers)
            .option("subscribe", s)
            .option("minOffsetsPerTrigger", "10")
            .option("maxTriggerDelay", "3600000")  # a bare number is ms, as in Spark
            .load()
            .writeStream.foreachBatch(lambda b, _i: batches.append(b.count()))
            .trigger(processingTime="200 milliseconds")
            .start()
        )
        try:
            wait_for("the first trigger", lambda: q.lastProgress is not None, q)
            kafka.produce(spark, servers, s, [b"x"] * 4)
            # Counted from the produce: triggers before it saw nothing to wait for.
            before = len(q.recentProgress)
            wait_for("five triggers with 4 of 10 records waiting", lambda: len(q.recentProgress) >= before + 5, q)
            assert sum(batches) == 0
            kafka.produce(spark, servers, s, [b"y"] * 6)
            wait_for("a batch of ten records", lambda: sum(batches) == 10, q)
            assert [b for b in batches if b] == [10]
        finally:
            q.stop()


def test_min_offsets_per_trigger_holds_back_neither_a_runs_first_batch_nor_trigger_once(
    spark, servers, make_stream, tmp_path
):
    """As Spark's source: the delay counts from a run's first trigger, which reads what is there,
    and Trigger.Once reads everything there is."""
    s = make_stream()
    batches: list[int] = []

    def run(**trigger):
        return (
            spark.readStream.format("streamctl")
            .option("kafka.bootstrap.servers", servers)
            .option("subscribe", s)
            .option("startingOffsets", "earliest")
            .option("minOffsetsPerTrigger", "10")
            .option("maxTriggerDelay", "1h")
            .load()
            .writeStream.foreachBatch(lambda b, _i: batches.append(b.count()))
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(**trigger)
            .start()
        )

    kafka.produce(spark, servers, s, [b"x"] * 4)
    q = run(once=True)
    assert q.awaitTermination(120)
    assert q.exception() is None
    assert batches == [4]
    kafka.produce(spark, servers, s, [b"y"] * 4)
    q = run(processingTime="200 milliseconds")  # a restart, 4 of 10 records waiting
    try:
        wait_for("the restart's first batch", lambda: sum(batches) == 8, q)
        assert batches == [4, 4]
    finally:
        q.stop()


def test_refused_spark_options_say_why_and_what_instead(spark, servers, make_stream):
    for option, says in (("minPartitions", "never splits a partition"), ("groupIdPrefix", "'kafka.group.id'")):
        with pytest.raises(Exception, match=f"Option '{option}' .*not supported.*{says}"):
            _read(spark, servers, subscribe=make_stream(), **{option: "4"}).collect()
    with pytest.raises(Exception, match="'endingOffsets' is for batch reads"):
        (
            spark.readStream.format("streamctl")
            .option("kafka.bootstrap.servers", servers)
            .option("subscribe", make_stream())
            .option("endingOffsets", "latest")
            .load()
            .writeStream.format("console")
            .start()
            .awaitTermination(60)
        )


def test_timestamp_type_is_kafkas(spark, servers, make_stream):
    s = make_stream()
    kafka.produce(spark, servers, s, [b"a"], timestamps=[1_700_000_000_000])
    row = _read(spark, servers, subscribe=s).select("timestampType", F.unix_millis("timestamp").alias("ms")).first()
    assert (row.timestampType, row.ms) == (0, 1_700_000_000_000)


def test_sparks_kafka_delegation_tokens_are_said_to_go_unused(spark, servers, make_stream):
    """Spark's connector takes credentials from the delegation token of spark.kafka.clusters.<id>;
    streamctl does not load it, and says so where a job relies on it (no kafka.sasl.jaas.config)."""
    stream = make_stream()
    with session_conf(spark, {"spark.kafka.clusters.c1.auth.bootstrap.servers": servers}), driver_log(spark) as log:
        spark.readStream.format("streamctl").option("kafka.bootstrap.servers", servers).option(
            "subscribe", stream
        ).load()
        said = [line for line in log().splitlines() if "delegation tokens" in line]
    assert len(said) == 1 and "spark.kafka.clusters.c1" in said[0] and "kafka.sasl.jaas.config" in said[0], said
