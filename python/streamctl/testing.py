"""Helpers for testing streamctl pipelines against a real Kafka broker.

Kept free of any pytest import so it works wherever the wheel is installed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from streamctl.broker import KafkaBroker

__all__ = ["KafkaBroker", "kafka_broker"]


@contextmanager
def kafka_broker(
    port: int | None = None,
    *,
    properties: Mapping[str, str] | None = None,
    start_timeout: float = 60.0,
) -> Iterator[KafkaBroker]:
    """Start a single-node Kafka broker on 127.0.0.1 and stop it on exit.

    Fetches the broker jars with Maven on first use (see
    :func:`streamctl.broker.ensure_kafka_jars`). The broker is killed even if
    the test process dies, and its temp dir is removed on exit.

    Example, a session-wide pytest fixture::

        import pytest
        from streamctl.testing import kafka_broker

        @pytest.fixture(scope="session")
        def kafka():
            with kafka_broker() as broker:
                yield broker

        def test_reads(kafka):
            servers = kafka.bootstrap_servers   # "127.0.0.1:PORT"
    """
    broker = KafkaBroker(port, properties=properties, start_timeout=start_timeout)
    with broker:
        yield broker
