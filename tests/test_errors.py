"""Every Python entry point (``load()``, ``start()``, ``save()``, the helpers) fails with
``streamctl.StreamctlException``, a ``pyspark.errors.IllegalArgumentException`` with a ``STREAMCTL_*``
condition, whose message is the JVM's, first; never a bare Py4J error. A bad option fails the call
that names it: ``load()`` for the source, ``start()`` for the sink."""

from __future__ import annotations

import pytest
from pyspark.errors import IllegalArgumentException

import streamctl
from streamctl import options
from streamctl_testing import kafka

from conftest import session_conf

pytestmark = pytest.mark.smoke


def _write(spark, servers, stream, mode=None, **kafka):
    writer = spark.createDataFrame([("k", "v" * 1000)], ["key", "value"]).write.format("streamctl")
    writer = writer.options(**options.sink(servers, stream, kafka=kafka))
    (writer if mode is None else writer.mode(mode)).save()


def test_a_batch_write_failing_on_the_driver_raises_streamctls_error(spark, servers, make_stream):
    with pytest.raises(streamctl.StreamctlException) as err:
        _write(spark, servers, make_stream(), acks="maybe")
    assert str(err.value).startswith("Option 'kafka.acks': Invalid value maybe for configuration acks")
    assert err.value.getCondition() == "STREAMCTL_ERROR"
    assert isinstance(err.value, IllegalArgumentException)


def test_a_batch_write_failing_in_an_executor_raises_streamctls_error(spark, servers, make_stream):
    """A record larger than the producer allows fails its send in the writer task; the error is the
    writer's, not Spark's "Job aborted" wrapping."""
    stream = make_stream()
    with pytest.raises(streamctl.StreamctlException) as err:
        _write(spark, servers, stream, **{"max.request.size": "200"})
    # Refused by the producer before a partition was chosen: the error cannot name one.
    assert str(err.value).startswith(f"Kafka at {servers} failed while writing to stream '{stream}': RecordTooLarge")
    assert err.value.getCondition() == "STREAMCTL_ERROR"


def test_a_send_the_broker_refuses_names_the_partition(spark, servers, make_stream):
    """A record the producer lets through but the broker refuses (larger than its message.max.bytes,
    1 MB by default) fails for one partition, and the error says which."""
    stream = make_stream(2)
    rows = spark.createDataFrame([("k", "v" * 2_000_000, 1)], "key string, value string, partition int")
    with pytest.raises(streamctl.StreamctlException) as err:
        rows.write.format("streamctl").options(
            **options.sink(servers, stream, kafka={"max.request.size": "10485760"})
        ).save()
    assert str(err.value).startswith(
        f"Kafka at {servers} failed while writing to stream '{stream}' partition 1: RecordTooLarge"
    ), str(err.value)


def test_a_batch_write_takes_the_default_save_mode_and_refuses_overwrite(spark, servers, make_stream):
    stream = make_stream()
    _write(spark, servers, stream)  # ErrorIfExists, as Spark's Kafka sink accepts it
    assert kafka.read_raw(spark, servers, stream, 0) == [b"v" * 1000], "the default mode wrote its record"
    with pytest.raises(streamctl.StreamctlException, match=r"^Save mode Overwrite is not supported"):
        _write(spark, servers, stream, mode="overwrite")
    assert len(kafka.read_raw(spark, servers, stream, 0)) == 1, "the refused overwrite wrote nothing"


def test_a_helper_raises_streamctl_exception_with_the_jvm_message(spark, tmp_path):
    with pytest.raises(streamctl.StreamctlException) as err:
        streamctl.describe_tasks(spark, checkpoint=str(tmp_path / "never-ran"))
    assert str(err.value).startswith("No task mapping in the metadata store at ")
    assert isinstance(err.value, IllegalArgumentException)
    assert err.value.getCondition() == "STREAMCTL_ERROR"


def test_the_helpers_reach_the_store_with_the_sessions_hadoop_settings(spark, tmp_path):
    """Under Spark Connect, spark.conf.set is how a client gives its file system's settings (an
    object store's credentials): the store beside the checkpoint is reached with them, as Spark
    reaches the checkpoint. A default file system nothing serves shows which settings were used."""
    with (
        session_conf(spark, {"fs.defaultFS": "nosuchfs://x"}),
        pytest.raises(streamctl.StreamctlException, match="nosuchfs"),
    ):
        streamctl.describe_tasks(spark, checkpoint=str(tmp_path / "cp"))


def test_the_python_helpers_own_checks_raise_streamctl_exception(spark):
    """Not only the JVM's errors: a helper that finds bad input itself raises the same exception."""
    df = spark.range(1).selectExpr("CAST(id AS TIMESTAMP) AS ts", "id")
    with pytest.raises(streamctl.StreamctlException, match="column 'nope' is not in the DataFrame"):
        streamctl.with_upstream_watermark(df, "nope")
    with pytest.raises(streamctl.StreamctlException, match="column 'id' must be a timestamp"):
        streamctl.with_upstream_watermark(df, "id")
    with pytest.raises(streamctl.StreamctlException, match="name at least one stream"):
        options.broadcast()


def test_a_bad_source_option_fails_at_load_naming_it(spark, servers, make_stream):
    stream = make_stream()

    def load(**extra):
        return spark.readStream.format("streamctl").options(**options.source(servers, [stream]), **extra).load()

    with pytest.raises(streamctl.StreamctlException, match=r"^Unknown option 'max\.record\.per\.batch'"):
        load(**{"max.record.per.batch": "10"})
    with pytest.raises(streamctl.StreamctlException, match=r"^Option 'max\.records\.per\.batch'") as err:
        load(**{"max.records.per.batch": "-1"})
    assert err.value.getCondition() == "STREAMCTL_ERROR"
    # The Python helpers' values meet the JVM's rules, as an option written by hand does.
    with pytest.raises(streamctl.StreamctlException, match=r"^Option 'partition\.check\.interval' .*got '-5000ms'"):
        load(**options.partition_check_interval(-5))
    with pytest.raises(streamctl.StreamctlException, match=r"^Option 'subscribe' names no topic"):
        spark.readStream.format("streamctl").options(**options.source(servers, [])).load()


def test_a_bad_sink_option_fails_at_start_naming_it(spark, servers, make_stream, tmp_path):
    df = spark.readStream.format("streamctl").options(**options.source(servers, [make_stream()])).load()

    def start(columns, **extra):
        writer = df.select(*columns).writeStream.format("streamctl").options(**options.sink(servers, make_stream()))
        return writer.options(**extra).option("checkpointLocation", str(tmp_path / "cp")).start()

    before = {q.id for q in spark.streams.active}  # other files' queries may share the session
    with pytest.raises(streamctl.StreamctlException, match=r"^Option 'kafka\.acks'"):
        start(["value"], **{"kafka.acks": "maybe"})
    with pytest.raises(streamctl.StreamctlException, match=r"^Unknown option 'strem'"):
        start(["value"], strem="x")
    with pytest.raises(streamctl.StreamctlException, match=r"'value' column"):
        start(["key"])
    assert {q.id for q in spark.streams.active} == before, "a refused query was left running"
