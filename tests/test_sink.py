"""The streamctl sink: intermediate framing, partitioning, and the round trip back through the source."""

from __future__ import annotations

from collections import defaultdict

import pytest
from pyspark.sql import functions as F

from streamctl import StreamctlException, options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm

from conftest import run_available_now


def _write(df, servers, stream, checkpoint):
    q = (
        df.writeStream.format("streamctl")
        .options(**options.sink(servers, stream, intermediate=True))
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    assert q.awaitTermination(180), "the AvailableNow run did not finish"
    assert q.exception() is None, q.exception()


def _read_back(spark, servers, stream, checkpoint):
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest"))
        .options(**options.intermediate(stream))
        .load()
    )
    return run_available_now(df, checkpoint)


@pytest.mark.smoke
def test_round_trip_preserves_keys_values_and_partition_order(spark, servers, make_stream, tmp_path):
    src = make_stream(partitions=3, suffix="src")
    mid = make_stream(partitions=3, suffix="mid")
    n = 600
    kafka.produce(
        spark,
        servers,
        src,
        [f"value-{i}".encode() for i in range(n)],
        keys=[f"key-{i % 50}".encode() for i in range(n)],
        partitions=[i % 3 for i in range(n)],
    )
    read = spark.readStream.format("streamctl").options(
        **options.source(servers, [src], starting_offsets="earliest", max_records_per_batch=100)
    )
    _write(read.load().select("key", "value", "partition"), servers, mid, str(tmp_path / "w"))

    for p in range(3):
        raw = kafka.read_raw(spark, servers, mid, p)
        assert len([v for v in raw if v[:1] == b"\x00"]) == 200, "every user record carries type byte 0"
        # The run's first batch starts with an active message (type 4, in case an earlier run left the
        # producer idle); the finished AvailableNow run ended the stream: end-of-stream (type 2) comes last.
        assert raw[0][:1] == b"\x04" and raw[-1][:1] == b"\x02"
        assert all(v[:1] in (b"\x00", b"\x01") for v in raw[1:-1])

    rows = _read_back(spark, servers, mid, str(tmp_path / "r"))
    by_partition: dict[int, list[tuple[int, bytes, bytes]]] = defaultdict(list)
    for r in rows:
        by_partition[r.partition].append((r.offset, r.key, r.value))
    for p in range(3):
        got = [(k, v) for _, k, v in sorted(by_partition[p])]
        expected = [(f"key-{i % 50}".encode(), f"value-{i}".encode()) for i in range(n) if i % 3 == p]
        assert got == expected


def test_keyed_records_without_partition_column_stay_together(spark, servers, make_stream, tmp_path):
    src = make_stream(partitions=2, suffix="src")
    mid = make_stream(partitions=4, suffix="mid")
    n = 400
    kafka.produce(
        spark, servers, src, [str(i).encode() for i in range(n)], keys=[f"k{i % 16}".encode() for i in range(n)]
    )
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [src], starting_offsets="earliest"))
        .load()
        .select(F.col("key").cast("string").alias("key"), F.col("value").cast("string").alias("value"))
    )
    _write(df, servers, mid, str(tmp_path / "w"))
    rows = _read_back(spark, servers, mid, str(tmp_path / "r"))
    assert sorted(int(r.value) for r in rows) == list(range(n))
    partitions_of_key: dict[bytes, set[int]] = defaultdict(set)
    for r in rows:
        partitions_of_key[r.key].add(r.partition)
    assert all(len(ps) == 1 for ps in partitions_of_key.values())
    assert len({p for ps in partitions_of_key.values() for p in ps}) > 1, "16 keys spread over several partitions"
    # Within a key, the source partition's order survives.
    for key in partitions_of_key:
        values = [int(r.value) for r in sorted(rows, key=lambda r: r.offset) if r.key == key]
        assert values == sorted(values)


def test_batch_write_of_an_intermediate_stream_needs_no_save_mode(spark, servers, make_stream):
    mid = make_stream(partitions=1)
    spark.createDataFrame([("a", "1"), ("b", "2")], ["key", "value"]).write.format("streamctl").options(
        **options.sink(servers, mid, intermediate=True)
    ).save()
    # Two writer tasks: the order between them is not defined, the framing is.
    assert sorted(kafka.read_raw(spark, servers, mid, 0)) == [b"\x001", b"\x002"]


def test_intermediate_framing_of_string_binary_and_null_values(spark, servers, make_stream):
    # The writer copies a string value straight from the row into the frame: every UTF-8 byte must
    # land after the type byte, a null value must become an empty payload, a binary value is framed as is.
    text = "héllo ✓ 🚀"
    strings, binaries = make_stream(partitions=1, suffix="s"), make_stream(partitions=1, suffix="b")
    spark.createDataFrame([("a", text), ("b", None)], "key string, value string").write.format("streamctl").options(
        **options.sink(servers, strings, intermediate=True)
    ).save()
    assert sorted(kafka.read_raw(spark, servers, strings, 0)) == [b"\x00", b"\x00" + text.encode()]
    spark.createDataFrame([("a", bytearray(b"\x00\x01\xff"))], "key string, value binary").write.format(
        "streamctl"
    ).options(**options.sink(servers, binaries, intermediate=True)).save()
    assert kafka.read_raw(spark, servers, binaries, 0) == [b"\x00\x00\x01\xff"]


def test_columns_are_found_by_their_exact_names_as_sparks_sink_finds_them(spark, servers, make_stream):
    """KEY, Partition and an int topic column beside option topic are the user's own columns: a job
    moved from format("kafka") writes null keys and lets the producer choose the partition, as there."""
    out = make_stream(partitions=2)
    rows = spark.createDataFrame(
        [("a", 7, 1, 42), ("b", 8, 1, 43)], "value string, KEY int, Partition int, topic int"
    ).repartition(1)
    rows.write.format("streamctl").options(**options.sink(servers, out)).save()
    records = [r for p in (0, 1) for r in kafka.read_records(spark, servers, out, p)]
    assert sorted((k, v) for k, v, _h in records) == [(None, b"a"), (None, b"b")]


def test_a_sink_given_a_sources_options_and_no_topic_says_so(spark, servers):
    """One options dict for a source and a sink (the topic taken from a column): the write is taken
    for a source with a schema, and the error says what to change."""
    rows = spark.createDataFrame([("t", "v")], "topic string, value string")
    writer = rows.write.format("streamctl").option("kafka.bootstrap.servers", servers).option("subscribe", "t")
    with pytest.raises(StreamctlException, match="give the sink option 'topic', or leave the read options out"):
        writer.save()


def test_a_write_attempt_that_failed_does_not_pool_its_producer(spark, servers, make_stream):
    """An attempt that did not commit may leave records in its producer; pooled, they would still go
    out later (after the retry's records, and perhaps after the end-of-stream the driver sends once
    the retry commits). The producer is closed instead, dropping them."""
    out = make_stream()
    pool = jvm(spark).streamctl.system.ProducerPool
    before = pool.openCount()
    # The last row fails its Spark task, after the writer sent the others.
    rows = spark.range(10).coalesce(1).selectExpr("IF(id = 9, raise_error('row 9'), CAST(id AS STRING)) AS value")
    # Settings of its own: no idle producer of another test could serve it.
    sink = options.sink(servers, out, kafka={"client.id": f"failing-{out}"})
    with pytest.raises(Exception, match="row 9"):
        rows.write.format("streamctl").options(**sink).save()
    assert pool.openCount() == before
