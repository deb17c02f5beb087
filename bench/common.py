"""What the benchmarks share: the Spark session with both sources, timing, and the result table."""

from __future__ import annotations

import functools
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

import streamctl_testing

ROOT = Path(__file__).resolve().parent.parent
SPARK_KAFKA_LIB = ROOT / "target" / "bench-lib" / "spark-kafka"


def spark_kafka_jars() -> list[Path]:
    """Spark's built-in Kafka source, fetched by Maven for the benchmarks only."""
    if not any(SPARK_KAFKA_LIB.glob("spark-sql-kafka-*.jar")):
        print("fetching Spark's built-in Kafka source (spark-sql-kafka-0-10) from Maven Central...", flush=True)
        pom = ROOT / "bench" / "spark-kafka"
        subprocess.run(
            ["mvn", "-q", "-B", "-s", str(pom / "settings.xml"), "-f", str(pom / "pom.xml"),
             "dependency:copy-dependencies", f"-DoutputDirectory={SPARK_KAFKA_LIB}"],
            check=True,
        )
    return sorted(SPARK_KAFKA_LIB.glob("*.jar"))


@functools.cache
def jvm_classpath() -> str:
    """The Maven test classpath: target/classes still names the unshaded kafka-clients."""
    import pyspark

    out = ROOT / "target" / "bench.classpath"
    jars = Path(pyspark.__file__).parent / "jars"
    done = subprocess.run(
        ["mvn", "-q", "-B", "-f", str(ROOT / "pom.xml"), f"-Dspark.jars.dir={jars}", "dependency:build-classpath",
         "-Dmdep.includeScope=test", f"-Dmdep.outputFile={out}"],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"mvn dependency:build-classpath failed:\n{done.stdout}{done.stderr}")
    return os.pathsep.join([str(ROOT / "target" / "classes"), str(ROOT / "target" / "test-classes"), out.read_text()])


def bench_session(master: str = "local[2]") -> SparkSession:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(master)
        .appName("streamctl-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "3g")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.jars", ",".join(str(j) for j in spark_kafka_jars()))
    )
    spark = streamctl_testing.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_jvm_main(name: str, *args: str) -> str:
    """Runs `streamctl.bench.<name>` (bench/jvm) in its own JVM; returns its standard output."""
    out = subprocess.run(["java", "-cp", jvm_classpath(), f"streamctl.bench.{name}", *args],
                         check=True, capture_output=True, text=True)
    return out.stdout


def run_available_now(df: DataFrame, checkpoint: str, each: Callable[[DataFrame, int], None]) -> None:
    """Runs ``df`` to the end of its input with Trigger.AvailableNow, calling ``each`` on every
    batch (foreachBatch); raises the query's error if it failed."""
    q = df.writeStream.foreachBatch(each).option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
    q.awaitTermination()
    if q.exception() is not None:
        raise q.exception()  # type: ignore[misc]


def timed(f: Callable[[], object]) -> float:
    started = time.perf_counter()
    f()
    return time.perf_counter() - started


@dataclass
class Measurement:
    """Repeated timings of one variant of one benchmark."""

    bench: str
    variant: str
    records: int
    seconds: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def rate(self) -> float:
        return self.records / self.median


def table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True))  # noqa: E731
    return "\n".join([line(header), line(tuple("-" * w for w in widths)), *(line(r) for r in rows)])


def report(measurements: list[Measurement], baselines: tuple[str, ...]) -> str:
    """One row per variant: median/min/max seconds, records/s, and per baseline the ratio of the
    baseline's median time to the variant's (above 1.0: faster), when its bench has that baseline."""
    baselines = tuple(b for b in baselines if any(m.variant == b for m in measurements))
    bases = [{m.bench: m for m in measurements if m.variant == b} for b in baselines]
    rows = []
    for m in measurements:
        ratios = [f"{base[m.bench].median / m.median:.2f}x" if m.bench in base else "" for base in bases]
        rows.append((m.bench, m.variant, f"{m.median:.2f}", f"{min(m.seconds):.2f}", f"{max(m.seconds):.2f}",
                     f"{m.rate:,.0f}", *ratios))
    return table(rows, ("bench", "variant", "median s", "min s", "max s", "records/s", *(f"vs {b}" for b in baselines)))
