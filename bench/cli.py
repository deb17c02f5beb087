"""``./build.sh bench --only cli``: how fast the ``streamctl`` command answers, as an operator runs it.

Argument parsing, ``--help``, ``--version`` and usage errors must not start a JVM (target
< 0.5 s); ``describe`` and ``startpoints`` run in a plain JVM without Spark (target <= 3 s
median). The query they look at is a real one: a streamctl source on the embedded broker, run to
the end of its input, its SparkSession stopped before timing so only the command is measured.
Each command runs ``reps`` times; the table shows the median and the range.

Example::

    .venv/bin/python bench/cli.py --reps 7
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_session, run_available_now, table
from streamctl import options
from streamctl_testing import kafka, kafka_broker

TARGETS = {"parse": 0.5, "jvm": 3.0}


def _prepare(servers: str, checkpoint: str, partitions: int) -> None:
    spark = bench_session()
    try:
        kafka.create_stream(spark, servers, "bench-cli", partitions)
        kafka.produce_synthetic(spark, servers, "bench-cli", 10_000, 100)
        df = (
            spark.readStream.format("streamctl")
            .options(**options.source(servers, ["bench-cli"], starting_offsets="earliest", max_records_per_batch=2_500))
            .load()
        )
        run_available_now(df, checkpoint, lambda batch, _id: batch.count())
    finally:
        spark.stop()


def _time(args: list[str], reps: int, expect: int) -> list[float]:
    command = str(Path(sys.executable).with_name("streamctl"))
    seconds = []
    for _ in range(reps):
        started = time.perf_counter()
        done = subprocess.run([command, *args], capture_output=True, text=True, check=False)
        seconds.append(time.perf_counter() - started)
        if done.returncode != expect:
            raise RuntimeError(f"streamctl {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return seconds


def run(reps: int = 7, partitions: int = 8) -> str:
    """Times every command against a fresh query on an embedded broker; returns the table."""
    with tempfile.TemporaryDirectory(prefix="streamctl-bench-cli-") as tmp, kafka_broker() as broker:
        servers = broker.bootstrap_servers
        cp = str(Path(tmp) / "cp")
        _prepare(servers, cp, partitions)
        where = ["--checkpoint", cp, "--bootstrap-servers", servers]
        cases = [
            ("--help", ["--help"], 0, "parse"),
            ("--version", ["--version"], 0, "parse"),
            ("usage error (unknown command)", ["descrbe"], 2, "parse"),
            ("startpoints reset --help", ["startpoints", "reset", "--help"], 0, "parse"),
            ("describe (checkpoint only)", ["describe", "--checkpoint", cp], 0, "jvm"),
            ("describe (with broker: lag)", ["describe", "--checkpoint", cp, "--bootstrap-servers", servers], 0, "jvm"),
            ("startpoints list", ["startpoints", "list", "--checkpoint", cp], 0, "jvm"),
            (
                "startpoints reset --shift-by (plan)",
                ["startpoints", "reset", *where, "--all-topics", "--shift-by", "-10"],
                0,
                "jvm",
            ),
            (
                "startpoints reset --to-datetime --execute",
                ["startpoints", "reset", *where, "--topic=bench-cli", "--to-datetime=2024-01-01T00:00Z", "--execute"],
                0,
                "jvm",
            ),
        ]  # fmt: skip
        rows = []
        for name, args, expect, kind in cases:
            s = _time(args, reps, expect)
            rows.append((
                f"streamctl {name}", f"{statistics.median(s):.2f} s", f"{min(s):.2f}-{max(s):.2f} s",
                f"<= {TARGETS[kind]} s", "ok" if statistics.median(s) <= TARGETS[kind] else "SLOW",
            ))  # fmt: skip
    return table(rows, (f"CLI command ({reps} runs, {partitions} partitions)", "median", "range", "target", ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--partitions", type=int, default=8)
    args = parser.parse_args()
    print(run(args.reps, args.partitions))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
