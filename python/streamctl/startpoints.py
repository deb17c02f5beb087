"""Startpoints: move where a query starts reading, keeping its checkpoint and state.

A startpoint is written beside the query's checkpoint and applied at the query's next
start: the first batch after the restart begins there instead of at the checkpointed
offset, on the targeted partitions only; the query's state is kept. Everything is done
in the JVM (``streamctl.startpoint``); this module only carries arguments over py4j.

Example::

    from datetime import UTC, datetime, timedelta
    import streamctl

    query.stop()
    manager = streamctl.StartpointManager(spark, checkpoint="/chk/orders-count", bootstrap_servers=servers)
    an_hour_ago = datetime.now(timezone.utc) - timedelta(hours=1)
    manager.set("orders", startpoint=streamctl.Startpoint.timestamp(an_hour_ago))  # every partition
    query = start_the_same_query()  # its first batch re-reads the last hour
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import SparkSession

from streamctl._jvm import jvm
from streamctl.errors import StreamctlException, jvm_errors

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

    def _to_jvm(self, view: Any) -> Any:
        factory = view.streamctl.startpoint.Startpoint
        with jvm_errors():
            if self.type == "specific":
                return factory.specific(self.offset)
            if self.type == "timestamp":
                return factory.timestamp(self.timestamp_ms)
            if self.type == "oldest":
                return factory.oldest()
            if self.type == "upcoming":
                return factory.upcoming()
            if self.type == "custom":
                return factory.custom(self.kind, self.payload)
        raise StreamctlException(f"Unknown startpoint type {self.type!r}")

    @staticmethod
    def _from_json(node: dict[str, Any]) -> Startpoint:
        return Startpoint(
            node["type"],
            offset=node.get("offset"),
            timestamp_ms=node.get("timestamp"),
            kind=node.get("kind"),
            payload=node.get("payload"),
            creation_time_ms=node.get("creationTime"),
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
    def _from_json(node: dict[str, Any]) -> StartpointEntry:
        return StartpointEntry(
            key=node["key"],
            stream=node["stream"],
            partition=node["partition"],
            task=node.get("task"),
            startpoint=None if node["startpoint"] is None else Startpoint._from_json(node["startpoint"]),  # noqa: SLF001
            description=node["description"],
            offset=node.get("offset"),
            end_of_partition=node.get("endOfPartition"),
        )


class StartpointManager:
    """Writes, reads, lists and deletes a query's startpoints, knowing only its checkpoint (or its
    ``metadata.store.path``). With ``bootstrap_servers``, ``set`` and ``preview`` also resolve
    against Kafka: ``partition=None`` then means every partition, and an offset beyond the end or
    a partition that does not exist is refused at once instead of at the query's next start.

    Example::

        manager = StartpointManager(spark, checkpoint="/chk/q1")
        manager.set("orders", 3, Startpoint.oldest())
        manager.list()          # [StartpointEntry(key='kafka/orders/3', ...)]
        manager.delete("orders", 3)
    """

    def __init__(
        self,
        spark: SparkSession | Any,
        *,
        checkpoint: str | None = None,
        metadata_store_path: str | None = None,
        bootstrap_servers: str | None = None,
    ) -> None:
        if (checkpoint is None) == (metadata_store_path is None):
            raise StreamctlException(
                "StartpointManager: give exactly one of checkpoint= (the query's checkpointLocation) "
                "or metadata_store_path= (its 'metadata.store.path' option)"
            )
        # A SparkSession, or (for the CLI, which needs no session) a py4j JVM view.
        self._view = jvm(spark) if isinstance(spark, SparkSession) else spark
        self._checkpoint = checkpoint
        self._store_path = metadata_store_path
        self._servers = bootstrap_servers

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
        sp = self._check(startpoint)
        with self._commands() as c:
            return self._entries(c.set(stream, self._partition(partition), task, sp._to_jvm(self._view)))  # noqa: SLF001

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
        sp = self._check(startpoint)
        with self._commands() as c:
            return self._entries(c.preview(stream, self._partition(partition), task, sp._to_jvm(self._view)))  # noqa: SLF001

    def get(self, stream: str, partition: int, task: str | None = None) -> Startpoint | None:
        """The startpoint stored for exactly this key, or None."""
        with self._commands() as c:
            text = c.get(stream, self._partition(partition), task)
        return None if text is None else Startpoint._from_json(json.loads(text))  # noqa: SLF001

    def delete(self, stream: str, partition: int | None = None, *, task: str | None = None) -> list[StartpointEntry]:
        """Deletes the stream's startpoints (of one partition, of one task when given); returns them."""
        with self._commands() as c:
            return self._entries(c.delete(stream, self._partition(partition), task))

    def list(self) -> list[StartpointEntry]:
        """Every stored startpoint, SSP-level and task-level, sorted by key."""
        with self._commands() as c:
            return self._entries(c.list())

    @property
    def location(self) -> str:
        """Where the metadata store is."""
        with self._commands() as c:
            return str(c.storeLocation())

    @contextmanager
    def _commands(self) -> Iterator[Any]:
        with jvm_errors():
            commands = self._view.streamctl.spark.PythonStartpoints.open(
                self._checkpoint, self._store_path, self._servers
            )
            try:
                yield commands
            finally:
                commands.close()

    @staticmethod
    def _check(startpoint: Startpoint | None) -> Startpoint:
        if not isinstance(startpoint, Startpoint):
            raise StreamctlException(f"Give a startpoint, e.g. startpoint=Startpoint.oldest(), not {startpoint!r}")
        return startpoint

    @staticmethod
    def _partition(partition: int | None) -> int | None:
        if partition is not None and (isinstance(partition, bool) or not isinstance(partition, int) or partition < 0):
            raise StreamctlException(f"Partition must be a non-negative int, not {partition!r}")
        return partition

    @staticmethod
    def _entries(text: str) -> list[StartpointEntry]:
        return [StartpointEntry._from_json(n) for n in json.loads(text)["startpoints"]]  # noqa: SLF001
