"""Startpoints: move where a query starts reading, keeping its checkpoint and state.

A startpoint is written beside the query's checkpoint and applied at the query's next
start: the first batch after the restart begins there instead of at the checkpointed
offset, on the targeted partitions only; the query's state is kept. Everything is done
in the JVM (``streamctl.startpoint``, through ``CALL streamctl.system.*_startpoint*`` procedures),
so it works the same in a classic session and over Spark Connect.

Example::

    from datetime import datetime, timedelta, timezone
    import streamctl

    query.stop()
    manager = streamctl.StartpointManager(spark, checkpoint="/chk/orders-count", bootstrap_servers=servers)
    an_hour_ago = datetime.now(timezone.utc) - timedelta(hours=1)
    manager.set("orders", startpoint=streamctl.Startpoint.timestamp(an_hour_ago))  # every partition
    query = start_the_same_query()  # its first batch re-reads the last hour
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import Row, SparkSession

from streamctl import _procedures
from streamctl.errors import StreamctlException

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Startpoint:
    """A requested start position. Build one with the static methods; ``creation_time_ms`` is
    set on startpoints read back from the store.

    Example::

        Startpoint.timestamp(datetime(2024, 5, 1, 10, tzinfo=timezone.utc))
        Startpoint.specific(42)
    """

    type: str
    offset: int | None = None
    timestamp_ms: int | None = None
    kind: str | None = None
    payload: str | None = None
    creation_time_ms: int | None = field(default=None, compare=False)

    @staticmethod
    def timestamp(when: datetime | int) -> Startpoint:
        """The first message whose Kafka timestamp is at or after ``when`` (the partition's end when
        none is). ``when`` is a timezone-aware datetime or epoch milliseconds."""
        if isinstance(when, datetime):
            if when.tzinfo is None or when.utcoffset() is None:
                raise StreamctlException(
                    f"Startpoint.timestamp: datetime {when.isoformat()} has no timezone, so the instant is ambiguous; "
                    "give one, e.g. datetime(..., tzinfo=timezone.utc)"
                )
            return Startpoint("timestamp", timestamp_ms=(when - _EPOCH) // timedelta(milliseconds=1))
        if isinstance(when, bool) or not isinstance(when, int):
            raise StreamctlException(f"Startpoint.timestamp takes a datetime or epoch milliseconds (int), not {when!r}")
        return Startpoint("timestamp", timestamp_ms=when)

    @staticmethod
    def oldest() -> Startpoint:
        """The oldest message still on the broker."""
        return Startpoint("oldest")

    @staticmethod
    def upcoming() -> Startpoint:
        """After the last message: only messages written from now on."""
        return Startpoint("upcoming")

    @staticmethod
    def specific(offset: int) -> Startpoint:
        """Exactly this offset (it must lie between the partition's oldest and next offset)."""
        if isinstance(offset, bool) or not isinstance(offset, int):
            raise StreamctlException(f"Startpoint.specific takes an offset (int), not {offset!r}")
        return Startpoint("specific", offset=offset)

    @staticmethod
    def custom(kind: str, payload: str) -> Startpoint:
        """A system-specific position, resolved by the JVM resolver registered for ``kind``."""
        return Startpoint("custom", kind=kind, payload=payload)

    @property
    def instant(self) -> datetime | None:
        """The instant of a timestamp startpoint, in UTC."""
        return None if self.timestamp_ms is None else _EPOCH + timedelta(milliseconds=self.timestamp_ms)

    def _arguments(self) -> dict[str, Any]:
        """The arguments of ``CALL streamctl.system.set_startpoint`` that describe this startpoint."""
        return {
            "type": self.type,
            "offset": self.offset,
            "timestamp": self.timestamp_ms,
            "kind": self.kind,
            "payload": self.payload,
        }

    @staticmethod
    def _from_struct(value: Row) -> Startpoint:
        """A startpoint as the procedures return it: its type and fields, read by the JVM."""
        return Startpoint(
            value["type"],
            offset=value["offset"],
            timestamp_ms=value["timestamp"],
            kind=value["kind"],
            payload=value["payload"],
            creation_time_ms=value["creation_time"],
        )


@dataclass(frozen=True)
class StartpointEntry:
    """A startpoint under its store key: for a stream's partition, optionally for one task.

    ``offset`` and ``end_of_partition`` are set when it was resolved against Kafka (``set`` or
    ``preview`` with bootstrap servers): ``end_of_partition`` says a timestamp found no message at
    or after it, so the query starts at the end. ``startpoint`` is None when the stored value is
    corrupt; ``description`` then holds the error (``delete`` removes it).
    """

    key: str
    stream: str
    partition: int
    task: str | None
    startpoint: Startpoint | None
    description: str
    offset: int | None = None
    end_of_partition: bool | None = None

    @staticmethod
    def _from_row(row: Row) -> StartpointEntry:
        return StartpointEntry(
            key=row.key,
            stream=row.stream,
            partition=row.partition,
            task=row.task,
            startpoint=None if row.startpoint is None else Startpoint._from_struct(row.startpoint),  # noqa: SLF001
            description=row.description,
            offset=row.offset,
            end_of_partition=row.end_of_partition,
        )


class StartpointManager:
    """Writes, reads, lists and deletes a query's startpoints, knowing only its checkpoint (or its
    ``metadata.store.path``). With ``bootstrap_servers`` (and ``kafka_options``: more Kafka client
    settings without the ``kafka.`` prefix, e.g. security), ``set`` and ``preview`` also resolve
    against Kafka: ``partition=None`` then means every partition, and an offset beyond the end or
    a partition that does not exist is refused at once instead of at the query's next start.
    Works in a classic session and over Spark Connect.

    Example::

        manager = StartpointManager(spark, checkpoint="/chk/q1")
        manager.set("orders", 3, Startpoint.oldest())
        manager.list()          # [StartpointEntry(key='kafka/orders/3', ...)]
        manager.delete("orders", 3)
    """

    def __init__(
        self,
        spark: SparkSession,
        *,
        checkpoint: str | None = None,
        metadata_store_path: str | None = None,
        bootstrap_servers: str | None = None,
        kafka_options: Mapping[str, str] | None = None,
    ) -> None:
        self._spark = spark
        self._store = {"checkpoint": checkpoint, "metadata_store_path": metadata_store_path}
        self._kafka = {"bootstrap_servers": bootstrap_servers, "kafka": dict(kafka_options or {}) or None}
        # Resolved now, by the JVM's rule (the store path when given, else the checkpoint's), so a
        # manager that names no store fails here rather than at its first use.
        self._location = str(self._rows("startpoint_store")[0].location)

    def set(
        self,
        stream: str,
        partition: int | None = None,
        startpoint: Startpoint | None = None,
        *,
        task: str | None = None,
    ) -> list[StartpointEntry]:
        """Writes ``startpoint`` for ``stream``'s ``partition`` (every partition when None: needs
        bootstrap servers), for every task reading it or only for ``task``; returns what it wrote."""
        return self._set(stream, partition, startpoint, task, dry_run=False)

    def preview(
        self,
        stream: str,
        partition: int | None = None,
        startpoint: Startpoint | None = None,
        *,
        task: str | None = None,
    ) -> list[StartpointEntry]:
        """What ``set`` would write and, with bootstrap servers, the offset each partition would
        start at. Writes nothing (the CLI's ``--dry-run``)."""
        return self._set(stream, partition, startpoint, task, dry_run=True)

    def get(self, stream: str, partition: int, task: str | None = None) -> Startpoint | None:
        """The startpoint stored for exactly this key, or None."""
        rows = self._rows("get_startpoint", stream=stream, partition=self._partition(partition), task=task)
        return Startpoint._from_struct(rows[0].startpoint) if rows else None  # noqa: SLF001

    def delete(self, stream: str, partition: int | None = None, *, task: str | None = None) -> list[StartpointEntry]:
        """Deletes the stream's startpoints (of one partition, of one task when given); returns them."""
        rows = self._rows("delete_startpoints", stream=stream, partition=self._partition(partition), task=task)
        return self._entries(rows)

    def list(self) -> list[StartpointEntry]:
        """Every stored startpoint, SSP-level and task-level, sorted by key."""
        return self._entries(self._rows("list_startpoints"))

    @property
    def location(self) -> str:
        """Where the metadata store is: ``metadata_store_path`` when given, else the one in the
        checkpoint (the source's own rule)."""
        return self._location

    def _set(
        self, stream: str, partition: int | None, startpoint: Startpoint | None, task: str | None, *, dry_run: bool
    ) -> list[StartpointEntry]:
        if not isinstance(startpoint, Startpoint):
            raise StreamctlException(f"Give a startpoint, e.g. startpoint=Startpoint.oldest(), not {startpoint!r}")
        rows = self._rows(
            "set_startpoint",
            stream=stream,
            partition=self._partition(partition),
            task=task,
            dry_run=dry_run,
            **self._kafka,
            **startpoint._arguments(),  # noqa: SLF001
        )
        return self._entries(rows)

    def _rows(self, procedure: str, **args: Any) -> list[Row]:
        return _procedures.rows(self._spark, procedure, **self._store, **args)

    @staticmethod
    def _partition(partition: int | None) -> int | None:
        # Only the type: which numbers are partitions is the JVM's one rule (SystemAdmin.checkPartitions).
        if partition is not None and (isinstance(partition, bool) or not isinstance(partition, int)):
            raise StreamctlException(f"Partition must be an int, not {partition!r}")
        return partition

    @staticmethod
    def _entries(rows: list[Row]) -> list[StartpointEntry]:
        return [StartpointEntry._from_row(r) for r in rows]  # noqa: SLF001
