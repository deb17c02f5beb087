"""The ``streamctl`` command (also ``python -m streamctl``): describe a query, move its
startpoints, draw its recent lag and watermarks; with streamctl-testing installed, a local Kafka
broker and the demo.

Arguments are parsed here with argparse before anything heavy is imported: ``--help``,
``--version`` and usage errors answer at once. The commands themselves run in a plain JVM
without Spark (``streamctl._ops``).

Example::

    streamctl describe --checkpoint /chk/q1 --bootstrap-servers 127.0.0.1:9092 --command-config client.properties
    streamctl startpoints reset --checkpoint /chk/q1 --topic orders --shift-by -100 --execute
    streamctl report --checkpoint /chk/q1 -o report.html
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from streamctl import __version__

TESTING_DISTRIBUTION = "streamctl-testing"
PROG = "streamctl"


def _example(text: str) -> dict[str, Any]:
    return {
        "epilog": "example:\n  " + text.strip().replace("\n", "\n  "),
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }


def _store_args(p: argparse.ArgumentParser, *, required: bool = True, both: bool = False) -> None:
    """--checkpoint or --metadata-store-path; with ``both``, also the two together (a reset takes
    the current offsets from the checkpoint and writes to the store), at least one checked by the
    command itself."""
    where = p if both else p.add_mutually_exclusive_group(required=required)
    where.add_argument("--checkpoint", metavar="CK", help="the query's checkpointLocation")
    where.add_argument(
        "--metadata-store-path",
        metavar="PATH",
        help="the query's 'metadata.store.path' option, when it sets one"
        + (" (with --checkpoint, which the current offsets come from)" if both else ""),
    )


def _broker_args(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--bootstrap-servers", metavar="HOST:PORT", help=f"Kafka, {what}")
    p.add_argument(
        "--command-config",
        metavar="FILE",
        help="a properties file of Kafka client settings, as Kafka's own tools take "
        "(security.protocol, sasl.jaas.config, ssl.*): where passwords belong",
    )
    p.add_argument(
        "--kafka-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Kafka client setting (e.g. security.protocol=SSL), over --command-config's; repeatable; "
        "put secrets in --command-config instead (a command line is visible to local users and kept in shell history)",
    )


def parser() -> argparse.ArgumentParser:
    """The whole command line, every command with an example in its help."""
    top = argparse.ArgumentParser(
        prog=PROG,
        description="Operate streamctl queries: describe them, move their startpoints, draw their recent progress.",
        **_example("streamctl describe --checkpoint /chk/q1 --bootstrap-servers 127.0.0.1:9092"),
    )
    top.add_argument("--version", action="version", version=f"streamctl {__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    d = commands.add_parser(
        "describe",
        help="per partition: task, executor, committed and log-end offsets, lag, seconds behind, startpoints, control",
        description="Where a query stands, per partition, from its checkpoint, metadata store and broker.",
        **_example("streamctl describe --checkpoint /chk/q1 --bootstrap-servers 127.0.0.1:9092 --output json"),
    )
    d.add_argument("--checkpoint", metavar="CK", required=True, help="the query's checkpointLocation")
    d.add_argument(
        "--metadata-store-path", metavar="PATH", help="the query's 'metadata.store.path' option, when it sets one"
    )
    _broker_args(d, "for log-end offsets and lag (left out when not given or not answering)")
    d.add_argument("--output", choices=["table", "json"], default="table", help="table (default) or json for tools")

    s = commands.add_parser(
        "startpoints",
        help="move where a query starts reading (like kafka-consumer-groups --reset-offsets)",
        description="Move where a query starts reading, keeping its state; applied when the query next starts.",
        **_example(
            "streamctl startpoints reset --checkpoint /chk/q1 --topic orders --to-datetime 2024-05-01T10:00:00Z "
            "--bootstrap-servers 127.0.0.1:9092\n"
            "streamctl startpoints reset --checkpoint /chk/q1 --all-topics --shift-by -100 --execute\n"
            "streamctl startpoints list --checkpoint /chk/q1"
        ),
    )
    sp = s.add_subparsers(dest="action", required=True, metavar="ACTION")
    r = sp.add_parser(
        "reset",
        aliases=["set"],
        help="plan startpoints (printed), written with --execute",
        description="Plan startpoints for some partitions; the plan is printed, and written only with --execute.",
        **_example(
            "streamctl startpoints reset --checkpoint /chk/q1 --topic orders:0,1 --to-earliest "
            "--bootstrap-servers 127.0.0.1:9092 --execute\n"
            "streamctl startpoints reset --checkpoint /chk/q1 --all-topics --to-current --export plan.csv\n"
            "streamctl startpoints reset --checkpoint /chk/q1 --from-file plan.csv --execute"
        ),
    )
    _store_args(r, both=True)
    which = r.add_mutually_exclusive_group()
    which.add_argument(
        "--topic",
        "--stream",
        action="append",
        metavar="TOPIC[:P,P]",
        help="a topic, or some of its partitions (orders:0,1); repeatable",
    )
    which.add_argument("--all-topics", action="store_true", help="every topic the query reads (from its checkpoint)")
    r.add_argument("--partition", type=int, metavar="P", help="one partition of the one --topic (same as --topic t:P)")
    r.add_argument("--task", help="only this task's view of the partitions (default: every task reading them)")
    to = r.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-earliest", action="store_true", help="the oldest message still on the broker")
    to.add_argument("--to-latest", action="store_true", help="only messages written from now on")
    to.add_argument("--to-offset", type=int, metavar="N", help="exactly this offset")
    to.add_argument("--to-datetime", metavar="ISO", help="first message at or after this instant: 2024-05-01T10:00:00Z")
    to.add_argument("--by-duration", metavar="DURATION", help="first message of this long ago: PT1H30M or 90min")
    to.add_argument("--shift-by", type=int, metavar="N", help="N records after (negative: before) the current offset")
    to.add_argument(
        "--to-current",
        action="store_true",
        help="the current offset: where the query goes on reading, after replaying a batch it did not commit "
        "(re-reads nothing, skips nothing)",
    )
    to.add_argument("--from-file", metavar="CSV", help="exact offsets from a CSV file of topic,partition,offset rows")
    run = r.add_mutually_exclusive_group()
    run.add_argument("--execute", action="store_true", help="write the startpoints")
    run.add_argument("--dry-run", action="store_true", help="only print the plan (the default)")
    r.add_argument(
        "--export", metavar="CSV", help="also write the plan as topic,partition,offset rows (for --from-file)"
    )
    _broker_args(r, "to list partitions and resolve where each starts")

    ls = sp.add_parser(
        "list", help="show stored startpoints", **_example("streamctl startpoints list --checkpoint /chk/q1")
    )
    _store_args(ls)
    de = sp.add_parser(
        "delete",
        help="delete a topic's startpoints (of one partition / task when given)",
        **_example("streamctl startpoints delete --checkpoint /chk/q1 --topic orders --partition 3"),
    )
    _store_args(de)
    de.add_argument("--topic", "--stream", required=True)
    de.add_argument("--partition", type=int)
    de.add_argument("--task")

    rep = commands.add_parser(
        "report",
        help="an HTML page of recent lag per partition and watermarks, with end-of-stream and startpoint events",
        description="Draws the recent batches the query's listener kept in its metadata store.",
        **_example("streamctl report --checkpoint /chk/q1 -o report.html"),
    )
    _store_args(rep)
    rep.add_argument("-o", "--output", metavar="FILE", required=True, help="the HTML file to write")

    t = commands.add_parser(
        "transactions",
        help="the Kafka transactions a query's transactional sink left open; abort them",
        description="The transactions of a query's transactional sink (docs/exactly-once.md). A query that died "
        "mid-batch leaves them open, holding back every read_committed reader of their partitions until they time "
        "out; abort ends them now, as the query's next run would.",
        **_example(
            "streamctl transactions list --checkpoint /chk/q1 --bootstrap-servers 127.0.0.1:9092\n"
            "streamctl transactions abort --checkpoint /chk/q1 --bootstrap-servers 127.0.0.1:9092"
        ),
    )
    t.add_argument("action", choices=["list", "abort"], help="list them, or abort the open ones")
    t.add_argument("--checkpoint", metavar="CK", required=True, help="the query's checkpointLocation")
    t.add_argument("--prefix", default="streamctl", help="the sink's option 'transactionalIdPrefix', when it sets one")
    _broker_args(t, "whose transaction coordinators are asked (required)")
    t.add_argument("--output", choices=["table", "json"], default="table", help="table (default) or json for tools")

    j = commands.add_parser(
        "jars",
        help="print the jars a Spark session needs, comma-separated, for spark-submit --jars",
        description="Print the jars a Spark session needs for streamctl, comma-separated, for spark-submit --jars: "
        "the streamctl jar of the installed pyspark's Spark line and Scala version (or of --spark-version and --scala, "
        "e.g. for a Spark Connect server or cluster whose Spark is not this Python's).",
        **_example(
            'spark-submit --jars "$(streamctl jars)" job.py\n'
            "spark-submit --packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0 "
            '--jars "$(streamctl jars --without-kafka-clients)" job.py\n'
            'start-connect-server.sh --jars "$(streamctl jars --spark-version 4.1.1)"'
        ),
    )
    j.add_argument(
        "--spark-version", metavar="VERSION", help="the Spark the jars are for (default: the installed pyspark's)"
    )
    j.add_argument("--scala", metavar="VERSION", help="its Scala version, 2.12 or 2.13 (default: that Spark's own)")
    j.add_argument(
        "--without-kafka-clients",
        action="store_true",
        help="leave out kafka-clients: the session gets it from spark-sql-kafka-0-10 (--packages)",
    )

    for name, text in _TESTING.items():
        commands.add_parser(name, help=f"{text} (needs {TESTING_DISTRIBUTION})", **_example(f"streamctl {name} --help"))
    return top


# Developer tooling from the streamctl-testing distribution, by command name.
_TESTING = {
    "broker": "run a local single-node Kafka broker (KRaft) until Ctrl-C",
    "demo": "run the end-to-end demo on an embedded broker",
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # The tooling commands take their own options, which argparse here would reject.
    if argv and argv[0] in _TESTING:
        return _from_testing(argv[0], argv[1:])
    args = parser().parse_args(argv)
    from streamctl import _ops

    try:
        if args.command == "jars":
            return _jars(args)
        if args.command == "describe":
            return _describe(args)
        if args.command == "startpoints":
            return _startpoints(args)
        if args.command == "transactions":
            return _transactions(args)
        return _report(args)
    except _ops.OpsError as e:
        print(f"{PROG} {args.command}: error: {e}", file=sys.stderr)
        return 2 if e.usage else 1


def _kafka_request(args: argparse.Namespace) -> dict[str, Any]:
    """The request's Kafka part: ``--command-config`` (read by the JVM, with Kafka's own
    properties parser) and the ``--kafka-option`` pairs that override it. A secret given with
    ``--kafka-option`` still works, with a warning that the command line exposes it."""
    from streamctl import _ops

    options = {}
    for pair in args.kafka_option:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise _ops.OpsError(f"--kafka-option {pair!r}: give KEY=VALUE, e.g. security.protocol=SSL", usage=True)
        key = key.strip().removeprefix("kafka.")
        if _ops.is_secret(key):
            print(
                f"{PROG}: warning: --kafka-option {key}=... puts a secret on the command line, where local users "
                "(ps) and your shell history see it; put it in a file given with --command-config",
                file=sys.stderr,
            )
        options[key] = value
    request: dict[str, Any] = {"kafkaOptions": options}
    if args.command_config:
        path = Path(args.command_config)
        if not path.is_file():
            raise _ops.OpsError(f"--command-config {args.command_config}: no such file", usage=True)
        request["commandConfig"] = str(path.resolve())
    return request


def _jars(args: argparse.Namespace) -> int:
    from streamctl import _ops
    from streamctl._jars import SparkLineError
    from streamctl.config import jar_paths

    try:
        jars = jar_paths(
            kafka_clients=not args.without_kafka_clients, spark_version=args.spark_version, scala=args.scala
        )
    except (SparkLineError, FileNotFoundError) as e:
        raise _ops.OpsError(str(e)) from None
    print(",".join(str(j) for j in jars))
    return 0


def _describe(args: argparse.Namespace) -> int:
    from streamctl import _ops, description

    req = {
        **description.request(args.checkpoint, args.bootstrap_servers, args.metadata_store_path),
        **_kafka_request(args),
    }
    node = _ops.run("describe", req)
    if args.output == "json":
        print(json.dumps(node, indent=2))
    else:
        print(description.from_json(node).table())
    return 0


def _topics(args: argparse.Namespace) -> list[dict[str, Any]]:
    from streamctl import _ops

    topics = []
    for spec in args.topic or []:
        name, sep, parts = spec.partition(":")
        if not name:
            raise _ops.OpsError(f"--topic {spec!r}: give a topic name, e.g. orders or orders:0,1", usage=True)
        partitions = None
        if sep:
            try:
                partitions = sorted({int(p) for p in parts.split(",") if p.strip()})
            except ValueError:
                raise _ops.OpsError(f"--topic {spec!r}: partitions are numbers, e.g. {name}:0,1", usage=True) from None
            if not partitions:
                raise _ops.OpsError(f"--topic {spec!r}: give partitions after ':', e.g. {name}:0,1", usage=True)
        topics.append({"topic": name, "partitions": partitions})
    if args.partition is not None:
        if len(topics) != 1 or topics[0]["partitions"] is not None:
            raise _ops.OpsError(
                "--partition goes with exactly one --topic without partitions (or write --topic t:P)", usage=True
            )
        topics[0]["partitions"] = [args.partition]
    return topics


def _from_file(path: str) -> list[dict[str, Any]]:
    from streamctl import _ops

    rows = []
    lines: dict[tuple[str, int], int] = {}  # (topic, partition) -> the line that gave it
    try:
        with open(path, newline="") as f:
            for n, row in enumerate(csv.reader(f), start=1):
                if not row or row[0].startswith("#") or row == ["topic", "partition", "offset"]:
                    continue
                if len(row) != 3:
                    raise _ops.OpsError(
                        f"{path} line {n}: expected topic,partition,offset, got {','.join(row)!r}", usage=True
                    )
                try:
                    rows.append({"topic": row[0].strip(), "partition": int(row[1]), "offset": int(row[2])})
                except ValueError:
                    raise _ops.OpsError(
                        f"{path} line {n}: partition and offset must be numbers: {','.join(row)!r}", usage=True
                    ) from None
                # Two offsets for one partition: which one was meant cannot be known.
                key = (rows[-1]["topic"], rows[-1]["partition"])
                if key in lines:
                    raise _ops.OpsError(
                        f"{path} line {n}: topic {key[0]} partition {key[1]} is already on line {lines[key]}",
                        usage=True,
                    )
                lines[key] = n
    except OSError as e:
        raise _ops.OpsError(f"--from-file {path}: {e.strerror}", usage=True) from None
    if not rows:
        raise _ops.OpsError(f"--from-file {path}: no topic,partition,offset rows", usage=True)
    return rows


def _target(args: argparse.Namespace) -> dict[str, Any]:
    if args.to_earliest:
        return {"to": "earliest"}
    if args.to_latest:
        return {"to": "latest"}
    if args.to_offset is not None:
        return {"to": "offset", "value": args.to_offset}
    if args.to_datetime is not None:
        return {"to": "datetime", "value": args.to_datetime}
    if args.by_duration is not None:
        return {"to": "duration", "value": args.by_duration}
    if args.shift_by is not None:
        return {"to": "shift", "value": args.shift_by}
    if args.to_current:
        return {"to": "current"}
    return {"to": "offsets", "value": _from_file(args.from_file)}


def _startpoints(args: argparse.Namespace) -> int:
    from streamctl import _ops, description

    req = description.request(args.checkpoint, getattr(args, "bootstrap_servers", None), args.metadata_store_path)
    if args.action == "list":
        entries = _ops.run("list", req)
        print(
            _startpoint_table(entries["startpoints"])
            if entries["startpoints"]
            else f"No startpoints in {entries['location']}."
        )
        return 0
    if args.action == "delete":
        entries = _ops.run("delete", {**req, "topic": args.topic, "partition": args.partition, "task": args.task})
        print(f"Deleted {len(entries['startpoints'])} startpoint(s) from {entries['location']}.")
        if entries["startpoints"]:
            print(_startpoint_table(entries["startpoints"]))
        return 0
    if not (args.checkpoint or args.metadata_store_path):
        raise _ops.OpsError(
            "which query? give --checkpoint CK (and --metadata-store-path PATH when it sets one)", usage=True
        )
    if not (args.topic or args.all_topics or args.from_file):
        raise _ops.OpsError("which partitions? give --topic TOPIC[:P,P], --all-topics or --from-file", usage=True)
    if args.from_file and (args.topic or args.all_topics):
        raise _ops.OpsError(
            "--from-file names its partitions itself: give it without --topic or --all-topics", usage=True
        )
    req.update(_kafka_request(args))
    request = {**req, **_target(args), "topics": _topics(args), "allTopics": args.all_topics, "task": args.task}
    if args.export and args.execute:
        # Whether the plan can be exported is known from the plan: find out before anything is written.
        _check_exportable(_ops.run("reset", {**request, "execute": False})["plan"], args.export)
    plan = _ops.run("reset", {**request, "execute": args.execute})
    rows = plan["plan"]
    print(_plan_table(rows))
    if plan.get("currentBatch"):
        print(_current_batch_line(plan["currentBatch"]))
    if args.export:
        _check_exportable(rows, args.export)
        with open(args.export, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["topic", "partition", "offset"])
            w.writerows([r["topic"], r["partition"], r["target"]] for r in rows)
        print(f"Plan exported to {args.export}.")
    if args.checkpoint and not plan["queryRan"]:
        print(
            f"No query has run with checkpoint {args.checkpoint} yet: the first one started with it applies "
            "these startpoints. If you meant a query that has run, check the path."
        )
    if plan["executed"]:
        print(f"Written to {plan['location']}; the query applies them when it next starts.")
    else:
        print(f"Dry run: nothing written to {plan['location']}; add --execute to write these startpoints.")
    return 0


def _current_batch_line(batch: dict[str, Any]) -> str:
    """Which batch CURRENT-OFFSET is the end of: one that did not commit is replayed before any startpoint applies."""
    if batch["committed"]:
        return f"CURRENT-OFFSET: where the query goes on reading, the end of committed batch {batch['batchId']}."
    return (
        f"CURRENT-OFFSET: where the query goes on reading, the end of batch {batch['batchId']}, "
        "which it planned but did not commit and replays first."
    )


def _check_exportable(rows: list[dict[str, Any]], path: str) -> None:
    """Refuses an export that cannot be written: an offset left unresolved, or no such directory."""
    from streamctl import _ops

    unresolved = [f"{r['topic']}:{r['partition']}" for r in rows if r["target"] is None]
    if unresolved:
        raise _ops.OpsError(
            f"--export needs every new offset; give --bootstrap-servers to resolve {', '.join(unresolved)}"
        )
    target = Path(path).resolve()
    if target.is_dir():
        raise _ops.OpsError(f"--export {path}: is a directory; give a file name")
    if not target.parent.is_dir():
        raise _ops.OpsError(f"--export {path}: there is no directory {target.parent}")
    if not os.access(target.parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise _ops.OpsError(f"--export {path}: not writable")


def _plan_table(rows: list[dict[str, Any]]) -> str:
    from streamctl.description import cell, columns

    header = ["TOPIC", "PARTITION", "TASK", "CURRENT-OFFSET", "NEW-OFFSET", "STARTPOINT", "NOTE"]
    body = [
        [
            r["topic"],
            str(r["partition"]),
            r["task"] or "(every task)",
            cell(r["current"]),
            cell(r["target"]),
            r["startpoint"],
            r["note"],
        ]
        for r in rows
    ]
    return columns([header, *body])


def _startpoint_table(entries: list[dict[str, Any]]) -> str:
    from streamctl.description import columns

    body = [[e["stream"], str(e["partition"]), e["task"] or "(every task)", e["description"]] for e in entries]
    return columns([["TOPIC", "PARTITION", "TASK", "STARTPOINT"], *body])


def _transactions(args: argparse.Namespace) -> int:
    from streamctl import _ops
    from streamctl.description import columns

    req = {
        "checkpoint": args.checkpoint,
        "bootstrapServers": args.bootstrap_servers,
        "prefix": args.prefix,
        "abort": args.action == "abort",
        **_kafka_request(args),
    }
    node = _ops.run("transactions", req)
    if args.output == "json":
        print(json.dumps(node, indent=2))
        return 0
    rows = [
        [t["transactionalId"], t["state"], t.get("startedAt", ""), ",".join(t["partitions"])]
        for t in node["transactions"]
    ]
    print(columns([["TRANSACTIONAL ID", "STATE", "STARTED", "PARTITIONS"], *rows]) if rows else "No transactions.")
    if args.action == "abort":
        print(f"Aborted {len(node['aborted'])} open transaction(s).")
    return 0


def _report(args: argparse.Namespace) -> int:
    from streamctl import _ops, description, report

    history = _ops.run("history", description.request(args.checkpoint, None, args.metadata_store_path))
    try:
        Path(args.output).write_text(report.html(history, title=args.checkpoint or args.metadata_store_path))
    except OSError as e:
        raise _ops.OpsError(f"-o {args.output}: {e.strerror}") from None
    batches = sum(len(b) for b in history["sources"].values())
    print(f"Wrote {args.output}: {batches} batch(es) of {len(history['sources'])} source(s).")
    return 0


def _from_testing(command: str, argv: Sequence[str]) -> int:
    """A command that lives in the streamctl-testing distribution (developer tooling a cluster does
    not install): runs ``streamctl_testing.<command>.main`` when it is installed, else says what to
    install and exits 2."""
    try:
        importlib.import_module("streamctl_testing")
    except ModuleNotFoundError as e:
        if e.name != "streamctl_testing":
            raise
        print(
            f"{PROG} {command}: needs the {TESTING_DISTRIBUTION} package, which is not installed "
            f"(pip install {TESTING_DISTRIBUTION}; ./build.sh package builds its wheel into dist/)",
            file=sys.stderr,
        )
        return 2
    result: int = importlib.import_module(f"streamctl_testing.{command}").main(list(argv))
    return result
