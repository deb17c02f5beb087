"""``python -m streamctl startpoints``: set, list and delete a query's startpoints from a shell.

Modelled on ``kafka-consumer-groups --reset-offsets``: name the query by its checkpoint, the
stream and optionally the partition, and where to go. The query applies them when it next starts.

Example::

    python -m streamctl startpoints set --checkpoint /chk/q1 --stream orders \\
        --to-datetime 2024-05-01T10:00:00Z --bootstrap-servers 127.0.0.1:9092 --dry-run
    python -m streamctl startpoints list --checkpoint /chk/q1
    python -m streamctl startpoints delete --checkpoint /chk/q1 --stream orders --partition 3
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from streamctl.errors import StreamctlException
from streamctl.startpoints import Startpoint, StartpointEntry, StartpointManager


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m streamctl startpoints", description="Move where a query starts reading, keeping its state."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def store_args(p: argparse.ArgumentParser) -> None:
        where = p.add_mutually_exclusive_group(required=True)
        where.add_argument("--checkpoint", help="the query's checkpointLocation")
        where.add_argument("--metadata-store-path", help="the query's 'metadata.store.path' option, when it sets one")

    s = commands.add_parser("set", help="write a startpoint, applied when the query next starts")
    store_args(s)
    s.add_argument("--stream", required=True)
    s.add_argument("--partition", type=int, help="one partition (default: every partition; needs --bootstrap-servers)")
    s.add_argument("--task", help="only this task's view of the partition (default: every task reading it)")
    to = s.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-datetime", metavar="ISO", help="first message at or after this instant: 2024-05-01T10:00Z")
    to.add_argument("--to-earliest", action="store_true", help="the oldest message still on the broker")
    to.add_argument("--to-latest", action="store_true", help="only messages written from now on")
    to.add_argument("--to-offset", type=int, metavar="N", help="exactly this offset")
    s.add_argument("--bootstrap-servers", help="Kafka, to resolve and check the startpoint now")
    s.add_argument("--dry-run", action="store_true", help="show where each partition would start; write nothing")

    ls = commands.add_parser("list", help="show stored startpoints")
    store_args(ls)

    d = commands.add_parser("delete", help="delete a stream's startpoints (of one partition / task when given)")
    store_args(d)
    d.add_argument("--stream", required=True)
    d.add_argument("--partition", type=int)
    d.add_argument("--task")
    return parser


def _startpoint(args: argparse.Namespace) -> Startpoint:
    if args.to_datetime is not None:
        try:
            when = datetime.fromisoformat(args.to_datetime)
        except ValueError:
            raise StreamctlException(
                f"--to-datetime {args.to_datetime!r} is not an ISO 8601 date-time, e.g. 2024-05-01T10:00:00Z"
            ) from None
        if when.tzinfo is None:
            raise StreamctlException(
                f"--to-datetime {args.to_datetime!r} has no timezone, so the instant is ambiguous; "
                "add one, e.g. Z or +02:00"
            )
        return Startpoint.timestamp(when)
    if args.to_earliest:
        return Startpoint.oldest()
    if args.to_latest:
        return Startpoint.upcoming()
    return Startpoint.specific(args.to_offset)


def table(entries: Sequence[StartpointEntry], resolved: bool) -> str:
    """Aligned columns, one row per stored (or would-be) startpoint."""
    header = ["STREAM", "PARTITION", "TASK", "STARTPOINT"] + (["OFFSET", "NOTE"] if resolved else [])
    rows = [header]
    for e in entries:
        row = [e.stream, str(e.partition), e.task or "(every task)", e.description]
        if resolved:
            note = "end of the partition: no message at or after that time" if e.end_of_partition else ""
            row += [str(e.offset), note]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def run(view: Any, argv: Sequence[str]) -> int:
    """Runs one command with a py4j JVM view (``main`` finds or starts one)."""
    args = _parser().parse_args(list(argv))
    servers = getattr(args, "bootstrap_servers", None)
    if getattr(args, "dry_run", False) and not servers:
        raise StreamctlException("--dry-run resolves against Kafka: give --bootstrap-servers")
    manager = StartpointManager(
        view, checkpoint=args.checkpoint, metadata_store_path=args.metadata_store_path, bootstrap_servers=servers
    )
    where = manager.location
    if args.command == "list":
        entries = manager.list()
        print(table(entries, resolved=False) if entries else f"No startpoints in {where}.")
        return 0
    if args.command == "delete":
        entries = manager.delete(args.stream, args.partition, task=args.task)
        print(f"Deleted {len(entries)} startpoint(s) from {where}.")
        if entries:
            print(table(entries, resolved=False))
        return 0
    sp = _startpoint(args)
    if args.dry_run:
        print(table(manager.preview(args.stream, args.partition, sp, task=args.task), resolved=True))
        print(f"Dry run: nothing written to {where}.")
        return 0
    written = manager.set(args.stream, args.partition, sp, task=args.task)
    # After the write, so that a refused startpoint prints its one-line error alone.
    if args.checkpoint and not os.path.isdir(os.path.join(args.checkpoint, "offsets")) and "://" not in args.checkpoint:
        print(f"note: no query has run with checkpoint {args.checkpoint} yet; check the path", file=sys.stderr)
    print(table(written, resolved=bool(servers)))
    print(f"Written to {where}; the query applies it when it next starts.")
    return 0


def main(argv: Sequence[str]) -> int:
    try:
        return run(_jvm_view(), argv)
    except StreamctlException as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def _jvm_view() -> Any:
    """The active session's JVM when there is one (a notebook, the demo); else a bare JVM with the
    streamctl jar, which starts in a few seconds, far quicker than a SparkSession."""
    from pyspark.errors import PySparkRuntimeError
    from pyspark.sql import SparkSession

    from streamctl._jvm import jvm

    try:
        return jvm(SparkSession.active())  # the thread's active session, else the default one
    except PySparkRuntimeError:
        pass
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    import streamctl

    conf = SparkConf().set("spark.jars", str(streamctl.jar_path()))
    # The JVM's own start-up chatter (log4j profile, native-hadoop warning) would bury the
    # table; it inherits this stderr, so point it at /dev/null while it starts. Errors still
    # come back through py4j.
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            gateway = launch_gateway(conf)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return gateway.jvm
