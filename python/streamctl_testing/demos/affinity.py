"""Host affinity on a real multi-executor Spark: tasks stay on their executor, and when one
executor is killed the others keep theirs.

Starts its own ``local-cluster`` SparkSession (separate executor JVMs on this machine), so it
must run in a process without another SparkSession::

    python -m streamctl_testing.demos.affinity --servers 127.0.0.1:9092 --workdir /tmp/aff --json out.json

Where each task really ran is read on the executor itself (the executor JVM's command line
names its id), not from streamctl, so the observations can check streamctl's assignment.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import streamctl
import streamctl_testing
from streamctl import options
from streamctl_testing import kafka
from streamctl_testing._proc import spawn
from streamctl_testing.demos import say, wait_until

if TYPE_CHECKING:
    from streamctl_testing.demo import DemoContext

EXECUTOR_MAIN = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
# Evaluated in the task that reads the partition: the JVM's own command line, which for an
# executor carries "--executor-id <id>" (the driver in local mode has none).
JVM_COMMAND_SQL = "reflect('java.lang.System', 'getProperty', 'sun.java.command')"


def local_cluster(executors: int) -> SparkSession.Builder:
    """A session builder for ``local-cluster`` with ``executors`` executor JVMs of one core each,
    set for short-lived executors on a machine shared with the driver and a broker."""
    return (
        SparkSession.builder.master(f"local-cluster[{executors},1,1024]")
        .config("spark.executor.memory", "512m")
        # C2 compiling Spark costs executors that live a minute more CPU than it saves, and one GC
        # thread leaves the cores to the work. Placement depends on neither.
        .config("spark.executor.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    )


def executor_of(jvm_command: str) -> str:
    """The executor id in an executor JVM's command line; ``driver`` for any other JVM."""
    m = re.search(r"--executor-id (\S+)", jvm_command or "")
    return m.group(1) if m else "driver"


def executor_pid(app_id: str, executor_id: str) -> int:
    """The pid of this application's executor ``executor_id``, found from process command lines."""
    pid = executor_pids(app_id).get(executor_id)
    if pid is None:
        raise LookupError(f"no {EXECUTOR_MAIN} process found with --app-id {app_id} --executor-id {executor_id}")
    return pid


def executor_pids(app_id: str) -> dict[str, int]:
    """The pids of this application's live executor JVMs by executor id, from process command lines."""
    found: dict[str, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue  # the process ended while we looked
        if EXECUTOR_MAIN in args and _has_pair(args, "--app-id", app_id):
            executor = next((b for a, b in itertools.pairwise(args) if a == "--executor-id"), None)
            if executor is not None:
                found[executor] = int(entry.name)
    return found


def _has_pair(args: list[str], flag: str, value: str) -> bool:
    return any(a == flag and b == value for a, b in itertools.pairwise(args))


def run(
    servers: str,
    workdir: str,
    *,
    executors: int = 3,
    partitions: int = 6,
    locality_wait: str | None = None,
    kill: bool = True,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Runs the scenario and returns what it saw: per batch, where each task ``ran`` (from the
    executor), where it was ``assigned`` (``describe_locality``) and the ``live`` executors;
    the source's progress ``metrics`` per batch; and a run with ``host.affinity=false``.
    ``kill=False`` stops after the first steady batches: no executor killed, no second run.

    ``locality_wait`` sets ``spark.locality.wait`` (Spark's default, 3s, when None): how long
    Spark holds a task for its preferred executor while another executor is free.
    """
    builder = local_cluster(executors)
    if locality_wait is not None:
        builder = builder.config("spark.locality.wait", locality_wait)
    spark = streamctl_testing.configure_spark(
        builder.appName("streamctl-affinity")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.streaming.numRecentProgressUpdates", "1000")
    ).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        return _scenario(spark, servers, Path(workdir), executors, partitions, kill, say)
    finally:
        spark.stop()


def _scenario(
    spark: SparkSession,
    servers: str,
    workdir: Path,
    executors: int,
    partitions: int,
    kill: bool,
    say: Callable[[str], None],
) -> dict[str, Any]:
    wait_until(f"{executors} executors", lambda: len(streamctl.live_executors(spark)) >= executors, 180)
    app_id = spark.sparkContext.applicationId
    say(f"Spark started {executors} executor JVMs: {_names(streamctl.live_executors(spark))}.")
    stream = f"affinity-{uuid.uuid4().hex[:8]}"
    kafka.create_stream(spark, servers, stream, partitions)

    feeding = [True]
    started = time.monotonic()

    def feed() -> None:  # one record per partition, so every task reads in every batch
        if feeding[0]:
            kafka.produce(spark, servers, stream, [b"x"] * partitions, partitions=list(range(partitions)))

    feed()
    checkpoint = str(workdir / "checkpoint")
    batches: list[dict[str, Any]] = []

    def each_batch(df: Any, batch_id: int) -> None:
        ran = {r.task: executor_of(r.jvm) for r in df.select("task", F.expr(JVM_COMMAND_SQL).alias("jvm")).collect()}
        assigned = {r.task: r.executor_id for r in streamctl.describe_locality(spark, checkpoint=checkpoint).collect()}
        live = [e for e, _ in streamctl.live_executors(spark)]
        batches.append(
            {
                "batch": batch_id,
                "ran": ran,
                "assigned": assigned,
                "live": live,
                "t": round(time.monotonic() - started, 1),
            }
        )
        feed()

    opts = options.source(servers, [stream], starting_offsets="earliest")
    source = spark.readStream.format("streamctl").options(**opts)

    q = (
        source.load()
        .writeStream.foreachBatch(each_batch)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="200 milliseconds")
        .start()
    )

    def running(done: Callable[[], bool]) -> Callable[[], bool]:
        def check() -> bool:
            if not q.isActive:
                raise RuntimeError(f"the query stopped: {q.exception()}")
            return done()

        return check

    def after(n: int, since: int) -> Callable[[], bool]:
        return running(lambda: len(batches) >= since + n)

    def stop(q: Any) -> dict[str, dict[str, str]]:
        # Between batches: a stop that interrupts foreachBatch's Python makes Spark print a
        # long (harmless) error, and the readers it interrupts drop their consumers.
        feeding[0] = False
        q.processAllAvailable()
        progress = _source_progress(q)
        q.stop()
        return progress

    wait_until("the first batches", after(4, 0), 180)
    if not kill:
        progress = stop(q)
        return {"executors": executors, "killed_at": len(batches), "batches": batches, "metrics": progress}
    victim = batches[-1]["assigned"]["Partition 0"]
    os.kill(executor_pid(app_id, victim), signal.SIGKILL)
    killed_at = len(batches)
    say(f"Ran {killed_at} batches, then killed executor {victim} with SIGKILL.")
    wait_until("a rebalance without it", running(lambda: victim not in batches[-1]["assigned"].values()), 180)
    # A cluster manager usually starts a replacement; wait for it a while, then for calm.
    _wait_quietly(running(lambda: len(batches[-1]["live"]) >= executors), 60)
    wait_until("batches after the rebalance", after(3, len(batches)), 120)
    progress = stop(q)
    off = _affinity_off(spark, servers, stream, workdir)
    return {
        "executors": executors,
        "victim": victim,
        "killed_at": killed_at,
        "batches": batches,
        "metrics": progress,
        "affinity_off": off,
    }


def _affinity_off(spark: SparkSession, servers: str, stream: str, workdir: Path) -> dict[str, Any]:
    checkpoint = str(workdir / "checkpoint-off")
    q = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest"))
        .option("host.affinity", "false")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(180)
    rows = streamctl.describe_locality(spark, checkpoint=checkpoint).collect()
    metrics = [dict(p["sources"][0]["metrics"]) for p in q.recentProgress if p["numInputRows"] > 0]
    return {"locality_rows": len(rows), "metrics": metrics}


def _wait_quietly(done: Callable[[], bool], timeout: float) -> None:
    with contextlib.suppress(TimeoutError):
        wait_until("", done, timeout)


def _source_progress(q: Any) -> dict[str, dict[str, str]]:
    return {str(p["batchId"]): dict(p["sources"][0]["metrics"]) for p in q.recentProgress if p["numInputRows"] > 0}


def narrate(result: dict[str, Any], say: Callable[[str], None] = print) -> None:
    """Says in plain words what ``run`` saw."""
    batches, metrics, victim = result["batches"], result["metrics"], result["victim"]
    say(f"Batch 0 placed the tasks: {_tasks_by_executor(batches[0]['assigned'])}.")
    for b in batches[1:]:
        m = metrics.get(str(b["batch"]), {})
        if m.get("tasksMoved", "0") != "0":
            say(
                f"Batch {b['batch']} (live executors {', '.join(b['live'])}): {m['tasksMoved']} tasks moved -> "
                f"{_tasks_by_executor(b['assigned'])}; consumers reused {m['consumersReused']}, "
                f"created {m['consumersCreated']}."
            )
    first = batches[result["killed_at"] - 1]["assigned"]
    kept = all(batches[-1]["assigned"][t] == e for t, e in first.items() if e != victim)
    say(f"The surviving executors kept all their own tasks: {'yes' if kept else 'NO'}.")
    elsewhere = [
        f"batch {b['batch']}: " + ", ".join(f"{t} ran on {e}, not {b['assigned'].get(t)}" for t, e in off)
        for b in batches
        if (off := sorted((t, e) for t, e in b["ran"].items() if b["assigned"].get(t) != e))
    ]
    say(
        f"Every task ran on its assigned executor (as the executor JVM itself reports) in "
        f"{len(batches) - len(elsewhere)} of {len(batches)} batches."
    )
    if elsewhere:
        say(
            f"    Elsewhere: {'; '.join(elsewhere)}. A preference, not a pin: when the executor is gone or busy "
            "longer than spark.locality.wait, Spark runs the task on a free one."
        )
    off = result["affinity_off"]
    say(f"With host.affinity=false, describe_locality shows {off['locality_rows']} assigned tasks.")


def _names(executors: list[tuple[str, str]]) -> str:
    return ", ".join(f"{i}@{h}" for i, h in executors)


def _tasks_by_executor(assigned: dict[str, str]) -> str:
    by: dict[str, list[str]] = {}
    for task, e in sorted(assigned.items(), key=lambda kv: int(kv[0].split()[-1])):
        by.setdefault(e, []).append(task.split()[-1])
    return "; ".join(f"executor {e}: partitions {','.join(ps)}" for e, ps in sorted(by.items()))


def run_in_child(servers: str, workdir: str, say: Callable[[str], None] = print) -> None:
    """Runs this scenario in a child Python (it needs a Spark of its own) and relays what it says.

    Example, from a process that already has a SparkSession::

        run_in_child("127.0.0.1:9092", "/tmp/affinity")
    """
    args = [sys.executable, "-m", __name__, "--servers", servers, "--workdir", workdir]
    # Spark's own log lines go to stderr; only the scenario's sentences are relayed.
    child = spawn(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert child.stdout is not None
    for line in child.stdout:
        say(line.rstrip())
    if child.wait() != 0:
        raise RuntimeError(f"the host affinity scenario failed (exit code {child.returncode})")


def step_host_affinity(ctx: DemoContext) -> None:
    """Demo step: three executor JVMs, tasks keep their executor; one is killed, the others keep theirs."""
    say("Starting a Spark with three executor JVMs (local-cluster) in a child process; this takes a minute.")
    run_in_child(ctx.servers, str(ctx.workdir / "affinity"), say=lambda s: say(f"    {s}"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamctl_testing.demos.affinity", description=__doc__)
    parser.add_argument("--servers", required=True, help="Kafka bootstrap servers")
    parser.add_argument("--workdir", required=True, help="where the checkpoints go")
    parser.add_argument("--executors", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--locality-wait", help="spark.locality.wait (default: Spark's)")
    parser.add_argument("--json", help="write the observations here")
    parser.add_argument("--no-kill", action="store_true", help="stop after the first steady batches")
    args = parser.parse_args(argv)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    result = run(
        args.servers,
        args.workdir,
        executors=args.executors,
        partitions=args.partitions,
        locality_wait=args.locality_wait,
        kill=not args.no_kill,
        say=say,
    )
    if "victim" in result:
        narrate(result, say=say)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
