"""Kafka operations through the streamctl-testing jar (py4j), so Python needs no Kafka client.

Example::

    from streamctl_testing import kafka
    kafka.create_stream(spark, servers, "orders", partitions=4)
    kafka.produce(spark, servers, "orders", [b"a", b"b"], keys=[b"k1", b"k2"])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict, Unpack

from pyspark.sql import SparkSession

from streamctl_testing._jvm import jvm


def _tools(spark: SparkSession) -> Any:
    return jvm(spark).streamctl.testing.KafkaTools


def create_stream(spark: SparkSession, servers: str, stream: str, partitions: int, replicas: int = 1) -> None:
    """Creates a topic with ``partitions`` partitions, ``replicas`` copies of each."""
    _tools(spark).createStream(servers, stream, partitions, replicas)


def leaders(spark: SparkSession, servers: str, stream: str) -> dict[int, int]:
    """Per partition of ``stream``, the node id of its leader (-1 while it has none)."""
    return {int(p): int(n) for p, n in _tools(spark).leaders(servers, stream).items()}


def transaction_coordinators(spark: SparkSession, servers: str, part: str) -> dict[str, int]:
    """Per transactional id containing ``part`` (a sink's ids name its topic), the node id of its
    transaction coordinator."""
    return {str(t): int(n) for t, n in _tools(spark).transactionCoordinators(servers, part).items()}


def grow_stream(spark: SparkSession, servers: str, stream: str, partitions: int) -> None:
    """Raises a topic's partition count to ``partitions``."""
    _tools(spark).growStream(servers, stream, partitions)


def delete_stream(spark: SparkSession, servers: str, stream: str) -> None:
    """Deletes a topic; Kafka finishes removing it in the background."""
    _tools(spark).deleteStream(servers, stream)


def topic_id(spark: SparkSession, servers: str, stream: str) -> str:
    """The Kafka topic ID of ``stream``, as streamctl records it in a query's offsets."""
    return str(_tools(spark).topicId(servers, stream))


def upcoming_offsets(spark: SparkSession, servers: str, stream: str) -> dict[int, int]:
    """The next offset of each partition of ``stream``."""
    return {int(p): int(o) for p, o in _tools(spark).upcomingOffsets(servers, stream).items()}


class RecordColumns(TypedDict, total=False):
    """What records may carry besides their values, one item per value (``None``: Kafka's default)."""

    keys: Sequence[bytes | None] | None
    partitions: Sequence[int | None] | None
    timestamps: Sequence[int | None] | None  # epoch milliseconds


def produce(
    spark: SparkSession, servers: str, stream: str, values: Sequence[bytes], **columns: Unpack[RecordColumns]
) -> int:
    """Writes plain records (no streamctl framing); ``keys``, ``partitions``, ``timestamps``: see
    :class:`RecordColumns`."""
    return int(_tools(spark).produce(servers, stream, *record_lists(values, **columns)))


def record_lists(
    values: Sequence[bytes],
    keys: Sequence[bytes | None] | None = None,
    partitions: Sequence[int | None] | None = None,
    timestamps: Sequence[int | None] | None = None,
) -> tuple[Any, ...]:
    """Parallel lists of records as the JVM tools take them (partitions, keys, values, timestamps)."""
    n = len(values)
    for name, seq in (("keys", keys), ("partitions", partitions), ("timestamps", timestamps)):
        if seq is not None and len(seq) != n:
            raise ValueError(f"{name} has {len(seq)} items but values has {n}")
    return (
        None if partitions is None else list(partitions),
        None if keys is None else [None if k is None else bytearray(k) for k in keys],
        [bytearray(v) for v in values],
        None if timestamps is None else list(timestamps),
    )


def produce_with_headers(
    spark: SparkSession, servers: str, stream: str, value: bytes, headers: Sequence[tuple[str, bytes]]
) -> None:
    """Writes one plain record carrying ``headers``."""
    _tools(spark).produceWithHeaders(
        servers, stream, bytearray(value), [k for k, _ in headers], [bytearray(v) for _, v in headers]
    )


def produce_synthetic(spark: SparkSession, servers: str, stream: str, count: int, value_size: int = 100) -> int:
    """Writes ``count`` records of ``value_size`` bytes spread evenly over the partitions."""
    return int(_tools(spark).produceSynthetic(servers, stream, count, value_size))


def produce_transaction(
    spark: SparkSession, servers: str, stream: str, partition: int, values: list[bytes], *, commit: bool
) -> None:
    """Writes ``values`` to one partition in one Kafka transaction, then commits or aborts it (the
    partition then ends with the transaction's marker), as a transactional writer would."""
    _tools(spark).produceTransaction(servers, stream, partition, values, commit)


def read_raw(spark: SparkSession, servers: str, stream: str, partition: int, start: int = 0) -> list[bytes]:
    """The raw values of one partition, framing included."""
    return [bytes(v) for v in _tools(spark).readRaw(servers, stream, partition, start)]


def read_committed(spark: SparkSession, servers: str, stream: str, partition: int) -> list[bytes]:
    """The raw values of one partition as a plain Kafka consumer with ``isolation.level=read_committed`` reads them."""
    return [bytes(v) for v in _tools(spark).readCommitted(servers, stream, partition)]


def read_records(
    spark: SparkSession, servers: str, stream: str, partition: int
) -> list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
    """Every record of one partition as a plain Kafka consumer reads it: (key, value, headers)."""

    def as_bytes(v: Any) -> bytes | None:
        return None if v is None else bytes(v)

    out = []
    for r in _tools(spark).readRecords(servers, stream, partition):
        fields = list(r)
        headers = [(str(fields[i]), as_bytes(fields[i + 1])) for i in range(2, len(fields), 2)]
        out.append((as_bytes(fields[0]), as_bytes(fields[1]), headers))
    return out


def delete_records_before(spark: SparkSession, servers: str, stream: str, partition: int, offset: int) -> None:
    """Deletes a partition's records before ``offset``, as retention would."""
    _tools(spark).deleteRecordsBefore(servers, stream, partition, offset)


def group_member(spark: SparkSession, servers: str, stream: str, group: str) -> Any:
    """A live member of consumer group ``group`` subscribed to ``stream`` (a plain KafkaConsumer in the
    driver JVM, as another application sharing the group id), once the group assigned it partitions.
    Call ``.close()`` on it to leave the group."""
    return _tools(spark).groupMember(servers, stream, group)


def consumer_groups_describe(servers: str, group: str) -> list[dict[str, str]]:
    """``kafka-consumer-groups --describe --group <group>``, run from Kafka's own tools jars (fetched
    once), one dict per row with its column names (``TOPIC``, ``PARTITION``, ``CURRENT-OFFSET``,
    ``LOG-END-OFFSET``, ``LAG``, ...): what an operator's tool sees of a group; none for a group
    that does not exist yet."""
    import subprocess

    from streamctl import _ops
    from streamctl_testing._kafka_jars import ensure_kafka_jars, ensure_kafka_tools_jars

    classpath = f"{ensure_kafka_tools_jars()}/*:{ensure_kafka_jars()}/*"
    command = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
    done = subprocess.run(
        # A one-shot tool: the quick JIT only (C2 would compile code it runs once).
        [_ops.java(), "-XX:TieredStopAtLevel=1", "-Dlog4j2.level=ERROR", "-cp", classpath, command,
         "--bootstrap-server", servers, "--describe", "--group", group],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"kafka-consumer-groups --describe --group {group} failed: {done.stderr.strip()[-2000:]}")
    lines = [line.split() for line in done.stdout.splitlines() if line.strip()]
    header = next((i for i, cols in enumerate(lines) if cols and cols[0] == "GROUP"), None)
    if header is None:  # "Consumer group '...' does not exist." (nothing committed to it yet)
        return []
    return [dict(zip(lines[header], cols, strict=False)) for cols in lines[header + 1 :]]


def consumer_group_lag(servers: str, group: str) -> dict[int, tuple[int, int, int]]:
    """Per partition with a committed offset, (``CURRENT-OFFSET``, ``LOG-END-OFFSET``, ``LAG``) as
    ``kafka-consumer-groups --describe`` shows them (:func:`consumer_groups_describe`)."""
    return {
        int(r["PARTITION"]): (int(r["CURRENT-OFFSET"]), int(r["LOG-END-OFFSET"]), int(r["LAG"]))
        for r in consumer_groups_describe(servers, group)
        if r.get("CURRENT-OFFSET", "-") != "-"
    }
