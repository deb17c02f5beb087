"""What the benchmarks share: the Spark session with both sources, the settings each comparison
runs at, timing in alternating order, Kafka client counters, and the result table."""

from __future__ import annotations

import functools
import os
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

import streamctl_testing
from streamctl_testing._jvm import jvm
from streamctl_testing.spark_kafka import spark_kafka_jars

ROOT = Path(__file__).resolve().parent.parent

# The two settings every comparison runs at. "defaults": neither side gets a Kafka setting, so
# each runs the defaults of the session's one kafka-clients (the built-in's 3.9.2). "tuned": both
# sides get exactly these, so what differs is the connector, not the client configuration.
TUNED_CONSUMER: dict[str, str] = {
    # The built-in source asks the broker for the earliest and latest offsets on every poll
    # (two ListOffsets round trips): with Kafka's default of 500 records a poll, that is most
    # of its time on a local broker. streamctl does not, but gets the same setting.
    "max.poll.records": "10000",
    "max.partition.fetch.bytes": str(4 << 20),
    "fetch.max.bytes": str(64 << 20),
    # streamctl's bounded readers default to 10 ms (kafka.fetch.max.wait.ms); without it here the
    # built-in would wait out Kafka's 500 ms in every consumer it creates in a timed run.
    "fetch.max.wait.ms": "10",
}
TUNED_PRODUCER: dict[str, str] = {
    # Both sinks run the session's kafka-clients (3.9.2), which lingers 0 ms by default; set here anyway,
    # so that a session on kafka-clients 4.x (5 ms by default) runs the same settings.
    "linger.ms": "5",
    "batch.size": str(128 << 10),
    "compression.type": "none",
    "acks": "all",
}
# With a fixed group id the built-in source's executor consumers are cached by (group id,
# partition) across queries, as streamctl's are by its own pool; without one, every query of the
# built-in gets a fresh group id and creates one consumer per partition.
BUILTIN_POOLED_GROUP = "streamctl-bench-builtin"

SETTINGS: dict[str, dict[str, Any]] = {
    "defaults": {
        "consumer": {},
        "producer": {},
        "consumers": "built-in: a fresh consumer per partition per query (new group id each query); "
        "streamctl: its executor-wide consumer pool",
    },
    "tuned": {
        "consumer": TUNED_CONSUMER,
        "producer": TUNED_PRODUCER,
        "consumers": f"pooled on both sides: streamctl's consumer pool, the built-in's consumer cache "
        f"(kafka.group.id={BUILTIN_POOLED_GROUP}), warm after the warm-up run",
    },
}


# The pipelines read small batches (a tenth of the records per batch; a second of a 5,000/s
# feed), where the built-in source is slowest at 10,000 records a poll: on 2026-11-23 (busy
# machine; 300k records, 3,750 per partition per batch, built-in only, 2 runs each) its pipeline
# took 20.1-22.6 s with the read's tuned consumer, 20.1-22.2 s with only max.poll.records=10000,
# 10.1-10.8 s with only the fetch sizes, 11.0-13.3 s at its defaults and 8.6-9.8 s with the fetch
# sizes and max.poll.records=1000. So the pipelines' tuned consumer, on both sides, polls 1,000.
PIPELINE_SETTINGS: dict[str, dict[str, Any]] = {
    **SETTINGS,
    "tuned": {**SETTINGS["tuned"], "consumer": {**TUNED_CONSUMER, "max.poll.records": "1000"}},
}


def session_kafka_clients_jar() -> Path:
    """The kafka-clients jar of the benchmark session: the built-in connector's, which streamctl
    uses too (a session has one kafka-clients, not relocated)."""
    return next(j for j in spark_kafka_jars() if j.name.startswith("kafka-clients-"))


def builtin_kafka_version() -> str:
    return session_kafka_clients_jar().name.removeprefix("kafka-clients-").removesuffix(".jar")


def connector_version() -> str:
    jar = next((j for j in spark_kafka_jars() if j.name.startswith("spark-sql-kafka-")), None)
    return jar.name.removesuffix(".jar") if jar else "?"


@functools.cache
def jvm_classpath() -> str:
    """The Maven test classpath (target/classes, the test classes and every dependency)."""
    import pyspark

    out = ROOT / "target" / "bench.classpath"
    jars = Path(pyspark.__file__).parent / "jars"
    done = subprocess.run(
        [
            "mvn",
            "-q",
            "-B",
            "-f",
            str(ROOT / "pom.xml"),
            f"-Dspark.jars.dir={jars}",
            "dependency:build-classpath",
            "-Dmdep.includeScope=test",
            f"-Dmdep.outputFile={out}",
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"mvn dependency:build-classpath failed:\n{done.stdout}{done.stderr}")
    return os.pathsep.join([str(ROOT / "target" / "classes"), str(ROOT / "target" / "test-classes"), out.read_text()])


def bench_session(master: str = "local[2]", extra: Mapping[str, str] | None = None) -> SparkSession:
    """The benchmarks' SparkSession with both sources; ``extra``: more settings (bench/profile_read.py's agent)."""
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
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    spark = streamctl_testing.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_jvm_main(name: str, *args: str) -> str:
    """Runs `streamctl.bench.<name>` (bench/jvm) in its own JVM; returns its standard output."""
    out = subprocess.run(
        ["java", "-cp", jvm_classpath(), f"streamctl.bench.{name}", *args], check=True, capture_output=True, text=True
    )
    return out.stdout


def run_available_now(
    df: DataFrame, checkpoint: str, each: Callable[[DataFrame, int], None], output_mode: str = "append"
) -> list[Any]:
    """Runs ``df`` to the end of its input with Trigger.AvailableNow, calling ``each`` on every
    batch (foreachBatch); raises the query's error if it failed; returns its progress reports."""
    q = (
        df.writeStream.foreachBatch(each)
        .outputMode(output_mode)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    if q.exception() is not None:
        raise q.exception()  # type: ignore[misc]
    return list(q.recentProgress)


def timed(f: Callable[[], object]) -> float:
    started = time.perf_counter()
    f()
    return time.perf_counter() - started


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_ids(spark: SparkSession, broker: streamctl_testing.KafkaBroker) -> dict[str, int]:
    """The processes whose CPU a benchmark reads: the Spark JVM (local mode: driver and executor) and the broker."""
    assert broker.pid is not None
    return {"Spark JVM": int(jvm(spark).java.lang.ProcessHandle.current().pid()), "broker": broker.pid}


def timed_cpu(run: Callable[[], object], pids: dict[str, int]) -> tuple[float, dict[str, float]]:
    """Wall seconds of ``run`` and the CPU seconds each of ``pids`` used meanwhile."""
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    started = time.perf_counter()
    run()
    seconds = time.perf_counter() - started
    return seconds, {name: cpu_seconds(pid) - before[name] for name, pid in pids.items()}


def kafka_options(settings: Mapping[str, str]) -> dict[str, str]:
    return {f"kafka.{k}": v for k, v in settings.items()}


def describe(settings: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items()) or "kafka-clients defaults"


class ClientCounters:
    """Kafka consumers created and requests sent by the clients in the Spark JVM (local mode:
    driver and executor), read from the clients' own JMX metrics: both connectors' kafka-clients
    register them (one kafka-clients, shared by both in the session). A pooled consumer keeps its
    counters across queries, so a run's figures are differences of two snapshots; a consumer
    closed within the run would be missed (neither connector closes one while reading)."""

    def __init__(self, spark: SparkSession) -> None:
        from streamctl_testing._jvm import jvm

        j = jvm(spark)
        gateway = spark.sparkContext._gateway  # noqa: SLF001 - py4j arrays need the gateway
        assert gateway is not None
        self._server = j.java.lang.management.ManagementFactory.getPlatformMBeanServer()
        self._name = j.javax.management.ObjectName
        # The platform MBean server's class is in a package java.management does not export, so
        # py4j cannot call it directly; its public interface's methods can, reflectively.
        api = j.java.lang.Class.forName("javax.management.MBeanServer")
        types = gateway.new_array(j.java.lang.Class, 2)
        types[0] = j.java.lang.Class.forName("javax.management.ObjectName")
        types[1] = j.java.lang.Class.forName("javax.management.QueryExp")
        self._query = api.getMethod("queryNames", types)
        types[1] = j.java.lang.Class.forName("java.lang.String")
        self._get = api.getMethod("getAttribute", types)
        self._args = lambda a, b: self._array(gateway, j, a, b)

    @staticmethod
    def _array(gateway: Any, j: Any, a: object, b: object) -> Any:
        out = gateway.new_array(j.java.lang.Object, 2)
        out[0], out[1] = a, b
        return out

    def _values(self, pattern: str, attribute: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for name in self._query.invoke(self._server, self._args(self._name(pattern), None)):
            if name.getKeyProperty("topic") is not None:
                continue
            client = name.getKeyProperty("client-id") or name.getKeyProperty("id")
            try:
                value = float(self._get.invoke(self._server, self._args(name, attribute)))
            except Exception:  # noqa: BLE001 - a consumer closed between query and read
                continue
            out[client] = out.get(client, 0.0) + value
        return out

    def records_consumed(self) -> dict[str, float]:
        """Records each consumer's polls returned so far (kafka-clients' records-consumed-total)."""
        return self._values("kafka.consumer:type=consumer-fetch-manager-metrics,*", "records-consumed-total")

    def snapshot(self) -> dict[str, dict[str, float]]:
        return {
            "requests": self._values("kafka.consumer:type=consumer-node-metrics,*", "request-total"),
            "fetches": self._values("kafka.consumer:type=consumer-fetch-manager-metrics,*", "fetch-total"),
        }

    @staticmethod
    def delta(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]) -> dict[str, int]:
        """Consumers created, fetch requests and other requests (ListOffsets, metadata, ...) between two snapshots."""
        created = len(set(after["requests"]) - set(before["requests"]))
        fetches = sum(v - before["fetches"].get(c, 0.0) for c, v in after["fetches"].items())
        requests = sum(v - before["requests"].get(c, 0.0) for c, v in after["requests"].items())
        return {"consumers_created": created, "fetch_requests": int(fetches), "other_requests": int(requests - fetches)}


@dataclass
class Measurement:
    """Repeated timings of one variant of one benchmark (warm-up excluded)."""

    bench: str
    variant: str
    records: int
    config: dict[str, Any] = field(default_factory=dict)
    seconds: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def rate(self) -> float:
        return self.records / self.median

    @property
    def spread(self) -> str:
        """min-max, and the half-range as a percentage of the median."""
        lo, hi = min(self.seconds), max(self.seconds)
        return f"{lo:.2f}-{hi:.2f} (±{50 * (hi - lo) / self.median:.0f}%)"

    def to_json(self) -> dict[str, Any]:
        return {
            "bench": self.bench,
            "variant": self.variant,
            "records": self.records,
            "config": self.config,
            "seconds": [round(s, 4) for s in self.seconds],
            "median_s": round(self.median, 4),
            "min_s": round(min(self.seconds), 4),
            "max_s": round(max(self.seconds), 4),
            "records_per_s": round(self.rate),
            **self.extra,
        }


def alternate(names: list[str], reps: int, run: Callable[[str, bool], float], results: dict[str, Measurement]) -> None:
    """One warm-up run of every variant (not counted), then ``reps`` rounds, each starting one
    variant further along the list (a rotation, so each variant runs first, and after each other
    one, as often as the others)."""
    for rep in range(-1, reps):
        start = (rep + 1) % len(names)
        for name in names[start:] + names[:start]:
            seconds = run(name, rep < 0)
            if rep >= 0:
                results[name].seconds.append(seconds)
            print(f"  {name}: {seconds:.2f} s{' (warm-up)' if rep < 0 else ''}", flush=True)


def table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True))  # noqa: E731
    return "\n".join([line(header), line(tuple("-" * w for w in widths)), *(line(r) for r in rows)])


def markdown_table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    return "\n".join(
        [
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
            *("| " + " | ".join(str(c) for c in r) + " |" for r in rows),
        ]
    )


def ratio_rows(measurements: list[Measurement], pairs: list[tuple[str, str]]) -> list[tuple[str, ...]]:
    """Per (variant, baseline) pair in a bench: baseline median over variant median (above 1: faster)."""
    by = {(m.bench, m.variant): m for m in measurements}
    rows = []
    for bench in dict.fromkeys(m.bench for m in measurements):
        for variant, base in pairs:
            if (bench, variant) in by and (bench, base) in by:
                v, b = by[(bench, variant)], by[(bench, base)]
                rows.append(
                    (
                        bench,
                        f"{variant} vs {base}",
                        f"{v.median:.2f} s",
                        f"{b.median:.2f} s",
                        f"{b.median / v.median:.2f}x",
                    )
                )
    return rows


def _clients(m: Measurement) -> str:
    runs = m.extra.get("clients_per_run")
    if not runs:
        return ""
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return f"{med['consumers_created']:g} / {med['fetch_requests']:g} / {med['other_requests']:g}"


def report_rows(measurements: list[Measurement]) -> list[tuple[str, ...]]:
    return [(m.bench, m.variant, f"{m.median:.2f}", m.spread, f"{m.rate:,.0f}", _clients(m)) for m in measurements]


REPORT_HEADER = (
    "bench",
    "variant",
    "median s",
    "min-max s",
    "records/s",
    "per run: consumers created / fetches / other requests",
)
RATIO_HEADER = ("bench", "comparison", "variant median", "baseline median", "ratio")
