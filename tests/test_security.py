"""Secured Kafka as clusters run it: SASL/PLAIN, SCRAM and TLS with Kafka's own class names in
``kafka.*`` options, and third-party plugins compiled against plain ``org.apache.kafka`` interfaces
(streamctl's kafka-clients is not relocated, so their classes load and work as written)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from streamctl import options
from streamctl_testing import kafka
from streamctl_testing.secured_broker import MECHANISMS, PASSWORD, USER, SecuredKafkaBroker

pytestmark = pytest.mark.smoke

HANDLER = "streamctl.testing.plugins.FileCredentialsCallbackHandler"
PARTITIONER = "streamctl.testing.plugins.LastBytePartitioner"

_names = itertools.count()


@pytest.fixture(scope="module")
def secured() -> Iterator[SecuredKafkaBroker]:
    with SecuredKafkaBroker(properties={"log.retention.ms": "-1"}) as broker:
        yield broker


def _streams(spark: SparkSession, broker: SecuredKafkaBroker, partitions: int) -> tuple[str, str]:
    """A fresh input and output stream, made over the broker's plain listener (test tooling)."""
    n = next(_names)
    src, dst = f"secured-src-{n}", f"secured-dst-{n}"
    for name in (src, dst):
        kafka.create_stream(spark, broker.bootstrap_servers, name, partitions)
    return src, dst


def _copy(spark: SparkSession, client: dict[str, str], src: str, dst: str, checkpoint: Path, **sink: str) -> None:
    """One job: the streamctl source reads ``src`` and the streamctl sink writes ``dst``, both with
    the ``client`` options (``sink``: more sink options), to the end of ``src``."""
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(client["kafka.bootstrap.servers"], [src], starting_offsets="earliest"))
        .options(**client)
        .load()
    )
    q = (
        df.select("value")
        .writeStream.format("streamctl")
        .options(**options.sink(client["kafka.bootstrap.servers"], dst))
        .options(**client, **sink)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(180)
    assert q.exception() is None, q.exception()


def _user_records(spark: SparkSession, broker: SecuredKafkaBroker, stream: str, partition: int) -> list[bytes]:
    # The sink writes plain records (no intermediate=true), read back over the plain listener.
    return kafka.read_raw(spark, broker.bootstrap_servers, stream, partition)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_job_reads_and_writes_through_a_secured_listener(spark, secured, mechanism, tmp_path):
    src, dst = _streams(spark, secured, partitions=1)
    values = [f"{mechanism}-{i}".encode() for i in range(20)]
    kafka.produce(spark, secured.bootstrap_servers, src, values)

    client = secured.client_options(mechanism)
    assert client["kafka.bootstrap.servers"] != secured.bootstrap_servers  # the secured listener, not the plain one
    _copy(spark, client, src, dst, tmp_path / "cp")

    assert _user_records(spark, secured, dst, 0) == values


def test_plugins_compiled_against_kafka_interfaces_serve_the_source_and_the_sink(spark, secured, tmp_path):
    """A SASL client callback handler (the only holder of the credentials: the JAAS config names
    none) authenticates the source's and the sink's clients, and a producer partitioner places the
    sink's records without a key."""
    src, dst = _streams(spark, secured, partitions=4)
    values = [f"r{i}".encode() for i in range(40)]
    kafka.produce(spark, secured.bootstrap_servers, src, values)
    credentials = tmp_path / "credentials"
    credentials.write_text(f"{USER}:{PASSWORD}")
    client = {
        **secured.client_options("SCRAM-SHA-256", with_credentials=False),
        "kafka.sasl.client.callback.handler.class": HANDLER,
        "kafka.streamctl.test.credentials.file": str(credentials),
    }

    _copy(spark, client, src, dst, tmp_path / "cp", **{"kafka.partitioner.class": PARTITIONER})

    # LastBytePartitioner: partition = last byte of the value mod 4 ('0' is byte 48).
    for p in range(4):
        got = _user_records(spark, secured, dst, p)
        assert sorted(got) == sorted(v for v in values if v[-1] % 4 == p), f"partition {p}"
