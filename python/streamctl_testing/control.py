"""Intermediate streams written directly, as an upstream streamctl query would: framed user records
and a named producer's watermark, end-of-stream and idle or active messages (tests, the demo and
benchmarks play upstream producers with these, without running a query). Goes through the
streamctl-testing jar.

Example::

    from streamctl_testing import control

    control.produce_framed(spark, servers, "mid", [b"a", b"b"], partitions=[0, 1])
    control.send_watermark(spark, servers, "mid", "p0", 1, 1_700_000_000_000)
    control.send_end_of_stream(spark, servers, "mid", "p0", 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

from pyspark.sql import SparkSession

from streamctl_testing._jvm import jvm
from streamctl_testing.kafka import RecordColumns, record_lists

__all__ = ["produce_framed", "produce_synthetic_framed", "send_end_of_stream", "send_idle_status", "send_watermark"]


def _tools(spark: SparkSession) -> Any:
    return jvm(spark).streamctl.testing.IntermediateTools


def produce_framed(
    spark: SparkSession, servers: str, stream: str, values: Sequence[bytes], **columns: Unpack[RecordColumns]
) -> int:
    """Writes user records in the intermediate format (type byte 0 in front), as the sink would;
    ``keys``, ``partitions``, ``timestamps`` as for :func:`streamctl_testing.kafka.produce`."""
    return int(_tools(spark).produceFramed(servers, stream, *record_lists(values, **columns)))


def produce_synthetic_framed(spark: SparkSession, servers: str, stream: str, count: int, value_size: int = 100) -> int:
    """Writes ``count`` framed records of ``value_size`` bytes spread evenly over the partitions, as
    ``kafka.produce_synthetic`` does for plain streams (benchmarks and load tests)."""
    return int(_tools(spark).produceSyntheticFramed(servers, stream, count, value_size))


def send_watermark(
    spark: SparkSession,
    servers: str,
    stream: str,
    producer: str,
    producer_count: int,
    timestamp_ms: int,
    partitions: Sequence[int] | None = None,
) -> None:
    """Writes producer ``producer``'s watermark message (one of ``producer_count``) to ``partitions``
    (default: every partition), as an upstream query would."""
    _tools(spark).sendWatermark(
        servers, stream, None if partitions is None else list(partitions), producer, producer_count, timestamp_ms
    )


def send_end_of_stream(
    spark: SparkSession,
    servers: str,
    stream: str,
    producer: str,
    producer_count: int,
    partitions: Sequence[int] | None = None,
) -> None:
    """Writes producer ``producer``'s end-of-stream message to ``partitions`` (default: every partition)."""
    _tools(spark).sendEndOfStream(
        servers, stream, None if partitions is None else list(partitions), producer, producer_count
    )


def send_idle_status(
    spark: SparkSession,
    servers: str,
    stream: str,
    producer: str,
    producer_count: int,
    *,
    idle: bool,
    watermark_ms: int | None = None,
    partitions: Sequence[int] | None = None,
) -> None:
    """Writes producer ``producer``'s idle message (``idle=True``) or active message (``idle=False``),
    with its watermark when given, to ``partitions`` (default: every partition), as an upstream query
    that goes quiet or resumes would."""
    _tools(spark).sendIdleStatus(
        servers, stream, None if partitions is None else list(partitions), producer, producer_count, idle, watermark_ms
    )
