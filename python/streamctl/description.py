"""Where a query stands, per partition: ``streamctl describe`` and :func:`describe`.

Everything is read by the JVM (``streamctl.ops.QueryDescription``): the committed offsets from
the query's offset and commit logs, pending startpoints, task locality and the reconciled
control state from its metadata store, log-end offsets and lag from the broker when it answers.
No SparkSession is needed (in a classic one, the session's driver answers, with the session's
Hadoop configuration: credentials for an object store set on its builder count); the query may be
running or stopped.

Example::

    import streamctl
    d = streamctl.describe("/chk/orders-count", bootstrap_servers="127.0.0.1:9092")
    for p in d.partitions:
        print(p.stream, p.partition, p.task, p.committed, p.log_end, p.lag, p.seconds_behind)
    print(d.table())
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from streamctl import _ops


@dataclass(frozen=True)
class IntermediateState:
    """The reconciled control state of an intermediate stream's partition."""

    producers: int
    end_of_stream_producers: list[str]
    end_of_stream: bool
    idle_producers: list[str]
    watermark_ms: int | None


@dataclass(frozen=True)
class PartitionState:
    """One partition as one task of one streamctl source reads it (a broadcast partition has a row per task).

    ``committed`` is the next offset after the last committed batch; ``log_end`` and ``lag`` are
    None when the broker was not asked or did not answer; ``seconds_behind`` is the time of the
    newest record on the broker minus that of the newest record the query processed (0 when
    ``lag`` is 0; None when unknown: no broker, or no record of the partition processed by a
    batch the query's progress history kept); ``executor`` is where host affinity assigned the task
    (None without it).
    """

    source: str
    stream: str
    partition: int
    task: str
    executor: str | None
    committed: int | None
    log_end: int | None
    lag: int | None
    pending_startpoints: list[str]
    control: IntermediateState | None
    seconds_behind: int | None = None


@dataclass(frozen=True)
class QueryDescription:
    """A query's state as :func:`describe` found it; ``raw`` is the JVM's JSON (``--output json``).

    Example::

        d = streamctl.describe("/chk/orders-count", bootstrap_servers="127.0.0.1:9092")
        print(d.committed_batch, sum(p.lag or 0 for p in d.partitions))
        print(d.table())  # what `streamctl describe` prints
    """

    checkpoint: str
    store: str
    committed_batch: int | None
    pending_batch: int | None
    watermark_ms: int | None
    broker: str
    partitions: list[PartitionState]
    upstream_watermark_ms: int | None = None
    upstream_end_of_stream: bool | None = None
    other_startpoints: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def table(self) -> str:
        """The describe table, aligned columns in the style of ``kafka-consumer-groups --describe``."""
        return format_table(self)


def describe(
    checkpoint: str,
    *,
    bootstrap_servers: str | None = None,
    metadata_store_path: str | None = None,
    kafka_options: dict[str, str] | None = None,
) -> QueryDescription:
    """Describes the query with this checkpoint location: per partition its task, executor,
    committed offset, log-end offset, lag and seconds behind (with ``bootstrap_servers``), pending startpoints and
    the control state of intermediate streams; and the query's watermark and end-of-stream state.

    Raises ``StreamctlException`` when the path holds no streamctl query.

    Example::

        d = streamctl.describe("/chk/q1", bootstrap_servers="127.0.0.1:9092")
        sum(p.lag or 0 for p in d.partitions)   # records behind
    """
    req = request(checkpoint, bootstrap_servers, metadata_store_path, kafka_options)
    in_session = _ops.in_session("describe", req)
    if in_session is not None:
        return from_json(in_session)
    try:
        return from_json(_ops.run("describe", req))
    except _ops.OpsError as e:
        from streamctl.errors import StreamctlException

        raise StreamctlException(str(e)) from None


def request(
    checkpoint: str | None,
    bootstrap_servers: str | None,
    metadata_store_path: str | None,
    kafka_options: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON request OpsMain takes for a query: where it is and how to reach its broker."""
    return {
        "checkpoint": checkpoint,
        "metadataStorePath": metadata_store_path,
        "bootstrapServers": bootstrap_servers,
        "kafkaOptions": dict(kafka_options or {}),
    }


def from_json(node: dict[str, Any]) -> QueryDescription:
    """The description from OpsMain's answer."""

    def control(c: dict[str, Any] | None) -> IntermediateState | None:
        if c is None:
            return None
        return IntermediateState(
            c["producers"], c["endOfStreamProducers"], c["endOfStream"], c["idleProducers"], c.get("watermarkMs")
        )

    up = node.get("upstream") or {}
    return QueryDescription(
        checkpoint=node["checkpoint"],
        store=node["store"],
        committed_batch=node.get("committedBatch"),
        pending_batch=node.get("pendingBatch"),
        watermark_ms=node.get("watermarkMs"),
        broker=node["broker"],
        partitions=[
            PartitionState(
                p["source"],
                p["stream"],
                p["partition"],
                p["task"],
                p.get("executor"),
                p.get("committed"),
                p.get("logEnd"),
                p.get("lag"),
                p["pendingStartpoints"],
                control(p.get("control")),
                p.get("secondsBehind"),
            )
            for p in node["partitions"]
        ],
        upstream_watermark_ms=up.get("watermarkMs"),
        upstream_end_of_stream=up.get("endOfStream"),
        other_startpoints=node.get("otherStartpoints", []),
        raw=node,
    )


def _instant(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def cell(v: object) -> str:
    """One table cell: ``-`` for a missing value."""
    return "-" if v is None or v == "" else str(v)


def columns(rows: list[list[str]]) -> str:
    """Left-aligned columns, two spaces apart, no trailing blanks."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def format_table(d: QueryDescription) -> str:
    """The describe table: a header of query-level facts, then one row per partition and task."""
    head = [f"Query checkpoint {d.checkpoint} (metadata store {d.store})"]
    if d.committed_batch is None:
        head.append(
            "No batch committed yet" + (f"; batch {d.pending_batch} planned" if d.pending_batch is not None else "")
        )
    else:
        pending = f"; batch {d.pending_batch} planned, not committed" if d.pending_batch is not None else ""
        head.append(
            f"Last committed batch {d.committed_batch}{pending}; query watermark {_instant(d.watermark_ms or None)}"
        )
    if d.upstream_end_of_stream is not None:
        eos = "yes" if d.upstream_end_of_stream else "no"
        head.append(
            f"Intermediate streams: upstream watermark {_instant(d.upstream_watermark_ms)}, end-of-stream {eos}"
        )
    head.append(f"Broker: {d.broker}")
    intermediate = any(p.control for p in d.partitions)
    header = [
        "SOURCE",
        "TOPIC",
        "PARTITION",
        "TASK",
        "EXECUTOR",
        "COMMITTED",
        "LOG-END",
        "LAG",
        "SECONDS-BEHIND",
        "STARTPOINT",
    ]
    if intermediate:
        header += ["WATERMARK", "EOS-PRODUCERS"]
    rows = [header]
    for p in d.partitions:
        row = [
            p.source,
            p.stream,
            str(p.partition),
            p.task,
            cell(p.executor),
            cell(p.committed),
            cell(p.log_end),
            cell(p.lag),
            cell(p.seconds_behind),
            ", ".join(p.pending_startpoints) or "-",
        ]
        if intermediate:
            c = p.control
            row += (
                [
                    _instant(c.watermark_ms),
                    f"{len(c.end_of_stream_producers)}/{c.producers}" + (" (ended)" if c.end_of_stream else ""),
                ]
                if c
                else ["-", "-"]
            )
        rows.append(row)
    out = "\n".join(head) + "\n\n" + columns(rows)
    if d.other_startpoints:
        out += "\n\nStartpoints for partitions the query does not read yet:\n  " + "\n  ".join(d.other_startpoints)
    return out
