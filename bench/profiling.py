"""What the profiles (bench/profile_read.py, bench/profile_write.py) share: async-profiler from Maven
Central loaded into the Spark JVM, profiling a list of runs into collapsed stacks, the shares of
samples by frame.

Not part of ./build.sh bench: a profile guides work, its figures are no benchmark result.
"""

from __future__ import annotations

import argparse
import subprocess
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from bench.common import ROOT, bench_session
from streamctl_testing import KafkaBroker, kafka_broker
from streamctl_testing._jvm import jvm

VERSION = "3.0"


def async_profiler(workdir: Path) -> tuple[Path, Path]:
    """The async-profiler jar (its Java API) and its Linux x64 library, fetched once with Maven."""
    jar = workdir / f"async-profiler-{VERSION}.jar"
    if not jar.is_file():
        subprocess.run(
            [
                "mvn",
                "-q",
                "-B",
                "dependency:copy",
                f"-Dartifact=tools.profiler:async-profiler:{VERSION}",
                f"-DoutputDirectory={workdir}",
            ],
            check=True,
        )
    lib = workdir / "linux-x64" / "libasyncProfiler.so"
    if not lib.is_file():
        with zipfile.ZipFile(jar) as z:
            z.extract("linux-x64/libasyncProfiler.so", workdir)
    return jar, lib


def arguments(doc: str, records: int, each: str, out: str) -> argparse.ArgumentParser:
    """A profile's command line: --records, --runs (profiled runs per ``each``), --out (target/``out``)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=records)
    parser.add_argument("--runs", type=int, default=3, help=f"profiled runs per {each}, after two warm-ups")
    parser.add_argument("--out", type=Path, default=ROOT / "target" / out)
    return parser


@contextmanager
def profiled_session(workdir: Path) -> Iterator[tuple[KafkaBroker, SparkSession, Any]]:
    """A broker, the benchmarks' session with async-profiler loaded into its JVM, and the profiler's
    Java API; ``workdir`` holds the profiler and the profiles."""
    workdir.mkdir(parents=True, exist_ok=True)
    jar, lib = async_profiler(workdir)
    with kafka_broker() as broker:
        spark = bench_session(
            extra={"spark.driver.extraJavaOptions": f"-agentpath:{lib}", "spark.driver.extraClassPath": str(jar)}
        )
        try:
            yield broker, spark, jvm(spark).one.profiler.AsyncProfiler.getInstance()
        finally:
            spark.stop()


def profile(profiler: Any, out: Path, runs: int, run: Callable[[], float], event: str = "itimer") -> list[float]:
    """Runs ``run`` ``runs`` times under the profiler (``event``: itimer samples CPU, wall every
    thread, running or waiting, per thread); writes the collapsed stacks to ``out``; returns the runs' seconds."""
    mode = "event=itimer,interval=2ms" if event == "itimer" else "event=wall,interval=5ms,threads"
    profiler.execute(f"start,{mode}")
    seconds = [run() for _ in range(runs)]
    profiler.execute(f"stop,file={out},collapsed")
    return seconds


class Stacks:
    """Collapsed stacks (one ``frame;frame;... count`` a line) and shares of their samples."""

    def __init__(self, collapsed: Path) -> None:
        self.rows: list[tuple[list[str], int]] = []
        for line in collapsed.read_text().splitlines():
            stack, _, n = line.rpartition(" ")
            self.rows.append((stack.split(";"), int(n)))
        self.total = sum(n for _, n in self.rows) or 1
        self.tasks = [(f, n) for f, n in self.rows if self.has(f, "Executor$TaskRunner.run")]
        self.in_tasks = sum(n for _, n in self.tasks) or 1

    @staticmethod
    def has(frames: list[str], *parts: str) -> bool:
        return any(p in f for f in frames for p in parts)

    def count(self, pred: Callable[[list[str]], bool], rows: list[tuple[list[str], int]] | None = None) -> int:
        return sum(n for f, n in (self.tasks if rows is None else rows) if pred(f))

    def share(self, pred: Callable[[list[str]], bool]) -> str:
        """The share of the executor task threads' samples whose stack satisfies ``pred``."""
        return f"{100 * self.count(pred) / self.in_tasks:.1f}%"

    def overview(self) -> str:
        jit = self.count(lambda f: self.has(f, "CompileBroker"), self.rows)
        gc = self.count(lambda f: self.has(f, "G1", "GangWorker", "ConcurrentGCThread"), self.rows)
        return (
            f"{self.total} samples: executor task threads {100 * self.in_tasks / self.total:.0f}%, "
            f"JIT compiler threads {100 * jit / self.total:.0f}%, GC {100 * gc / self.total:.0f}%, "
            "the rest driver and other threads"
        )
