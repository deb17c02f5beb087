"""Bad input fails with an error that names what is wrong; nothing is silently skipped."""

from __future__ import annotations

import json
import re

import pytest
from pyspark.errors import StreamingQueryException

from streamctl import StreamctlException, options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm

from conftest import run_available_now


def _fails(df, tmp_path, *fragments: str) -> str:
    q = (
        df.writeStream.format("memory")
        .queryName(f"bad_{abs(hash(tmp_path))}")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(StreamingQueryException) as err:
        q.awaitTermination(120)
    message = str(err.value)
    for f in fragments:
        assert f in message, f"{f!r} not in error: {message[:2000]}"
    return message


def _fails_at_load(reader, *fragments: str) -> None:
    """A bad source option fails ``load()`` itself, as Spark's Kafka source does, naming it."""
    with pytest.raises(StreamctlException) as err:
        reader.load()
    for f in fragments:
        assert f in str(err.value), f"{f!r} not in error: {str(err.value)[:2000]}"


def test_missing_bootstrap_servers(spark, make_stream):
    _fails_at_load(spark.readStream.format("streamctl").option("streams", make_stream()), "kafka.bootstrap.servers",
                   "required")  # fmt: skip


def test_missing_subscription_names_sparks_options_and_the_old_name(spark, servers):
    reader = spark.readStream.format("streamctl").option("kafka.bootstrap.servers", servers)
    _fails_at_load(reader, "One of the options 'subscribe'", "'subscribePattern' or 'assign' is required", "'streams'")


def test_unknown_option_is_named(spark, servers, make_stream):
    reader = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [make_stream()]))
        .option("max.records.per.bach", "10")
    )
    _fails_at_load(reader, "Unknown option 'max.records.per.bach'", "max.records.per.batch")


def test_bad_option_value_is_named(spark, servers, make_stream):
    reader = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [make_stream()]))
        .option("max.records.per.batch", "-3")
    )
    _fails_at_load(reader, "'max.records.per.batch'", "'-3'")
    # The Python option builder leaves the check to the JVM's one parser.
    source = options.source(servers, [make_stream(suffix="zero")], max_records_per_batch=0)
    _fails_at_load(spark.readStream.format("streamctl").options(**source), "Option 'maxOffsetsPerTrigger'", "'0'")


def test_stream_that_does_not_exist(spark, servers, tmp_path):
    df = spark.readStream.format("streamctl").options(**options.source(servers, ["no-such-topic-xyz"])).load()
    _fails(df, tmp_path, "no-such-topic-xyz", servers, "does not exist")


def test_offsets_json_naming_a_partition_the_query_does_not_read_fails_at_start(spark, servers, make_stream, tmp_path):
    # Spark's Kafka source refuses such a JSON too; ignoring the partition would start elsewhere than the user wrote.
    s = make_stream(partitions=2)
    kafka.produce(spark, servers, s, [b"a", b"b"], partitions=[0, 1])
    source = options.source(servers, [s], starting_offsets=json.dumps({s: {"0": 0, "1": -2, "3": 0}}))
    missing = f"Partition 3 of stream '{s}' does not exist (option 'startingOffsets'): it has 2 partitions (0..1)"
    _fails(spark.readStream.format("streamctl").options(**source).load(), tmp_path, missing)
    offsets = tmp_path / "cp" / "offsets"
    assert not offsets.is_dir() or not [p for p in offsets.iterdir() if p.name.isdigit()], "no batch may be planned"
    # A batch read's endingOffsets follow the same rule; a stream it does not read is named with what it reads.
    ending = json.dumps({s: {"0": 1, "1": 1}, "other": {"0": 1}})
    reader = spark.read.format("streamctl").options(**options.source(servers, [s])).option("endingOffsets", ending)
    not_read = "Option 'endingOffsets' names stream 'other' partition 0, which the query does not read"
    with pytest.raises(StreamctlException, match=re.escape(f"{not_read} (it reads stream '{s}' partitions 0, 1)")):
        reader.load().collect()


def test_broker_unreachable_is_a_bounded_wait_naming_the_servers(spark, tmp_path):
    dead = "127.0.0.1:1"
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(dead, ["x"], kafka={"default.api.timeout.ms": "3000"}))
        .load()
    )
    _fails(
        df, tmp_path, f"Kafka at {dead} did not answer within 3000 ms", "'kafka.default.api.timeout.ms' sets this wait"
    )


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        # streamctl reads this one itself.
        ("kafka.default.api.timeout.ms", "abc", "Invalid value abc for configuration default.api.timeout.ms"),
        ("kafka.default.api.timeout.ms", "0", "must be a positive number of milliseconds, not '0'"),
        # The rest go through Kafka's own parser.
        ("kafka.request.timeout.ms", "soon", "Invalid value soon for configuration request.timeout.ms"),
        ("kafka.security.protocol", "PLAIN", "Invalid value PLAIN for configuration security.protocol"),
    ],
)
def test_a_bad_kafka_value_is_named_with_kafkas_reason(spark, servers, make_stream, option, value, says):
    source = options.source(servers, [make_stream()])
    _fails_at_load(spark.readStream.format("streamctl").options(**source).option(option, value), f"Option '{option}'",
                   says)  # fmt: skip


def test_a_bad_kafka_value_of_the_sink_is_named(spark, servers, make_stream):
    with pytest.raises(Exception, match=r"Option 'kafka\.acks': Invalid value maybe for configuration acks"):
        spark.createDataFrame([("a",)], ["value"]).write.format("streamctl").options(
            **options.sink(servers, make_stream(), kafka={"acks": "maybe"})
        ).mode("append").save()


def test_an_unresolvable_bootstrap_host_is_named_with_the_cause(spark, tmp_path):
    servers = "no-such-host.invalid:9092"
    df = spark.readStream.format("streamctl").options(**options.source(servers, ["x"])).load()
    _fails(
        df,
        tmp_path,
        f"Cannot create a Kafka admin client for {servers}",
        "No resolvable bootstrap urls",
        "host 'no-such-host.invalid' does not resolve",
        "'kafka.bootstrap.servers'",
    )


def test_sink_rejects_a_value_column_of_the_wrong_type(spark, servers, make_stream, tmp_path):
    src = make_stream(suffix="src")
    mid = make_stream(suffix="mid")
    df = spark.readStream.format("streamctl").options(**options.source(servers, [src])).load()
    writer = (
        df.selectExpr("key", "offset as value")
        .writeStream.format("streamctl")
        .options(**options.sink(servers, mid))
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
    )
    with pytest.raises(StreamctlException) as err:  # at start(), before any batch
        writer.start()
    assert "Column 'value'" in str(err.value) and "bigint" in str(err.value)


def test_sink_without_value_column(spark, servers, make_stream):
    with pytest.raises(Exception, match="needs a 'value' column"):
        spark.createDataFrame([("a",)], ["key"]).write.format("streamctl").options(
            **options.sink(servers, make_stream())
        ).mode("append").save()


def test_intermediate_record_without_framing_names_stream_partition_offset(spark, servers, make_stream, tmp_path):
    stream = make_stream()
    kafka.produce(spark, servers, stream, [b"\x00ok", b""])
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest"))
        .options(**options.intermediate(stream))
        .load()
    )
    _fails(df, tmp_path, f"'{stream}' partition 0 offset 1", "no framing type byte")


def test_records_gone_from_the_broker_fail_unless_data_loss_is_allowed(spark, servers, make_stream, tmp_path):
    stream = make_stream()
    kafka.produce(spark, servers, stream, [str(i).encode() for i in range(10)])
    src = options.source(servers, [stream], starting_offsets="earliest")
    cp = str(tmp_path / "cp")
    df = spark.readStream.format("streamctl").options(**src).load()
    assert len(run_available_now(df, cp)) == 10
    kafka.produce(spark, servers, stream, [str(i).encode() for i in range(10, 20)])
    kafka.delete_records_before(spark, servers, stream, 0, 15)
    # A warm consumer may already hold 10..19 from its prefetch, which is no loss at all;
    # drop it, as an executor restart would, so the reader must go back to the broker.
    jvm(spark).streamctl.system.ConsumerPool.clear()

    q = (
        df.writeStream.foreachBatch(lambda b, i: b.count())
        .option("checkpointLocation", cp)
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(StreamingQueryException) as err:
        q.awaitTermination(120)
    assert f"stream '{stream}' partition 0 offset 10" in str(err.value)
    assert "failOnDataLoss" in str(err.value)

    tolerant = spark.readStream.format("streamctl").options(**src).option("fail.on.data.loss", "false").load()
    rows = run_available_now(tolerant, cp)
    assert sorted(r.offset for r in rows) == [15, 16, 17, 18, 19]


def test_a_sink_to_a_topic_that_does_not_exist_fails_in_seconds_naming_it(spark, servers, make_stream, tmp_path):
    # The test broker, like many clusters, does not create topics at their first write.
    missing = f"no-such-sink-topic-{abs(hash(tmp_path))}"
    says = [f"Stream '{missing}' does not exist on Kafka at {servers}", "auto.create.topics.enable=false"]
    src = make_stream()
    kafka.produce(spark, servers, src, [b"a"])
    df = spark.readStream.format("streamctl").options(**options.source(servers, [src], starting_offsets="earliest"))
    with pytest.raises(Exception) as err:  # at start() or from the query, as Spark builds the write
        q = (
            df.load()
            .select("value")
            .writeStream.format("streamctl")
            .options(**options.sink(servers, missing))
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination(120)
    assert all(s in str(err.value) for s in [*says, "(option 'topic' of the sink)"]), str(err.value)[:2000]
    # The sink's older name for the option is named as the user wrote it; a batch write fails the same way.
    with pytest.raises(StreamctlException) as err:
        spark.createDataFrame([("a",)], ["value"]).write.format("streamctl").option(
            "kafka.bootstrap.servers", servers
        ).option("stream", missing).save()
    assert all(s in str(err.value) for s in [*says, "(option 'stream' of the sink)"]), str(err.value)[:2000]
    # Told by the metadata the broker answered, not by a wait that ran out.
    assert "did not answer" not in str(err.value), str(err.value)[:2000]


def test_a_row_naming_a_topic_that_does_not_exist_is_named_at_its_send(spark, servers, make_stream):
    there = make_stream()
    missing = f"no-such-{there}"
    rows = spark.createDataFrame([(there, "a"), (missing, "b")], ["topic", "value"])
    # max.block.ms bounds the producer's wait for the topic to appear (60 s by default).
    writer = (
        rows.write.format("streamctl").option("kafka.bootstrap.servers", servers).option("kafka.max.block.ms", "2000")
    )
    with pytest.raises(StreamctlException) as err:
        writer.save()
    message = str(err.value)
    assert f"Stream '{missing}' does not exist on Kafka at {servers} (column 'topic' of a row)" in message, message[
        :2000
    ]
    assert "auto.create.topics.enable=false" in message and "did not answer" not in message, message[:2000]


def test_option_errors_name_the_option_as_written_and_known_options_show_every_name(spark, servers, make_stream):
    reader = spark.readStream.format("streamctl").option("kafka.bootstrap.servers", servers)
    _fails_at_load(
        reader.option("streams", make_stream()).option("starting.offsets", "oldest"), "Option 'starting.offsets'"
    )
    with pytest.raises(StreamctlException) as err:
        reader.option("streams", make_stream(suffix="b")).option("starting.offsets", "oldest").load()
    assert "startingOffsets" not in str(err.value), str(err.value)
    # The sink suggests a name its list of known options shows.
    with pytest.raises(StreamctlException) as err:
        spark.createDataFrame([("a",)], ["value"]).write.format("streamctl").option(
            "kafka.bootstrap.servers", servers
        ).option("strem", "x").save()
    message = str(err.value)
    assert "Did you mean 'stream'?" in message and "topic (alias stream)" in message, message
