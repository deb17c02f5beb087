"""streamctl-testing: what developers, tests, the demo and benchmarks need besides streamctl, kept
out of the product wheel a cluster installs.

- :func:`kafka_broker` / :class:`KafkaBroker`: a real single-node Kafka broker on 127.0.0.1
  (``python -m streamctl broker`` runs one in the foreground).
- :func:`configure_spark`: :func:`streamctl.configure_spark` plus this package's jar
  (``streamctl.testing``: the Kafka and intermediate-stream tools behind :mod:`streamctl_testing.kafka`
  and :mod:`streamctl_testing.control`, and the example chooser
  ``streamctl.testing.examples.StreamOrderChooser``).
- :mod:`streamctl_testing.demo`: ``python -m streamctl demo``.

Kept free of any pytest import so it works wherever the wheel is installed.

Example, a session-wide pytest fixture::

    import pytest
    from pyspark.sql import SparkSession
    import streamctl_testing
    from streamctl_testing import kafka

    @pytest.fixture(scope="session")
    def servers():
        with streamctl_testing.kafka_broker() as broker:
            yield broker.bootstrap_servers   # "127.0.0.1:PORT"

    def test_reads(servers):
        spark = streamctl_testing.configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()
        kafka.create_stream(spark, servers, "orders", partitions=4)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from pyspark.sql import SparkSession

from streamctl.config import append_setting, packaged_jar
from streamctl.config import configure_spark as _configure_product
from streamctl_testing.broker import KafkaBroker

__all__ = ["KafkaBroker", "configure_spark", "jar_path", "kafka_broker"]

_Builder = TypeVar("_Builder", bound=SparkSession.Builder)


def jar_path(spark_version: str | None = None, scala: str | None = None) -> Path:
    """The streamctl-testing jar carried inside this wheel for a Spark line (default: the installed
    pyspark's; it needs the streamctl jar of the same line beside it).

    Example::

        spark-submit --jars "$(python -c 'import streamctl; print(streamctl.jar_path())'),$(python -c \
            'import streamctl_testing; print(streamctl_testing.jar_path())')" job.py
    """
    return packaged_jar(Path(__file__).parent, "streamctl-testing", spark_version, scala)


def configure_spark(builder: _Builder) -> _Builder:
    """:func:`streamctl.configure_spark` and the streamctl-testing jar on ``spark.jars``, so that
    :mod:`streamctl_testing.kafka`, :mod:`streamctl_testing.control` and the example chooser work
    in that session.

    Example::

        spark = streamctl_testing.configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()
    """
    _configure_product(builder)
    append_setting(builder, "spark.jars", str(jar_path()))
    return builder


@contextmanager
def kafka_broker(
    port: int | None = None,
    *,
    properties: Mapping[str, str] | None = None,
    start_timeout: float = 60.0,
) -> Iterator[KafkaBroker]:
    """Start a single-node Kafka broker on 127.0.0.1 and stop it on exit.

    Fetches the broker jars with Maven on first use (see
    :func:`streamctl_testing.broker.ensure_kafka_jars`). The broker is killed even if
    the test process dies, and its temp dir is removed on exit.

    Example::

        with kafka_broker(properties={"log.retention.ms": "-1"}) as broker:
            servers = broker.bootstrap_servers   # "127.0.0.1:PORT"
    """
    broker = KafkaBroker(port, properties=properties, start_timeout=start_timeout)
    with broker:
        yield broker
