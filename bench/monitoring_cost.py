"""Monitoring cost (issue 33): what streamctl's monitoring adds to a steady-state batch at 1,024
partitions and 1 s triggers.

One topic of P partitions holds ``per_partition`` records of 100 B in every partition. streamctl
reads it with ``trigger(processingTime="1 second")``, ``maxOffsetsPerTrigger`` = 2 x P (about 2
records per partition a batch: a live topic's small batches), the tuned consumer settings of the
scale benchmark and the ``noop`` sink, in variants that take turns run by run in one session:

- **off**: ``spark.streamctl.metrics.enabled=false`` and no ``commitOffsets``;
- **metrics**: the metrics source on (gauges per partition, seconds behind with its newest-time
  request), no ``commitOffsets``;
- **commitOffsets**: ``commitOffsets=true`` to a consumer group, the metrics source off;
- **on**: both.

Each run reads the whole topic from a checkpoint of its own and is checked to have read every
record. A run's figure is the median ``triggerExecution`` of its batches after the first; the
variant's figure is the median over its runs. The cost is (on - off) / off. Spark's batch times
vary by several percent from run to run (more than the 2% goal), so the spread (min-max over runs)
is reported beside it, and so is the work itself, as CPU time per batch after the first:

- of the Spark JVM (local mode: driver and executors) and of the broker, from ``/proc``;
- of the Spark JVM's threads that do the monitoring work (``ThreadMXBean``): the listener bus
  thread of streaming listeners (``spark-listener-group-streams``: the metrics source's gauges and
  the batch summaries), the sources' progress recorders (``streamctl-progress-``: in every variant
  the progress history, and with commitOffsets the group's commits), streamctl's background requests
  (``streamctl-admin-requests``: seconds behind's newest-time request) and the Kafka admin
  client's network threads (their answers; also the heads every variant asks).

The added work per batch (a variant's CPU per batch minus off's) is then compared with off's
batch time: that is the figure the 2% goal is about, and unlike the batch time it does not depend
on what else the two cores were doing.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from bench.common import cpu_seconds
from bench.scale import PROGRESS_THREAD, SCALE_SETTINGS, small_batches
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm

METRICS_CONF = "spark.streamctl.metrics.enabled"
VARIANTS = ("off", "metrics", "commitOffsets", "on")
HEADER = ("variant", "runs", "batch ms (median)", "min-max over runs", "batches per run", "cost vs off")
# The Spark JVM's threads whose CPU time is reported apart (by name prefix).
THREADS = {
    "listener": "spark-listener-group-streams",
    "progress recorder": PROGRESS_THREAD,
    "background requests": "streamctl-admin-requests",
    "admin client": "kafka-admin-client-thread",
}
CPU_COLUMNS = ("Spark JVM", "broker", *THREADS)
CPU_HEADER = (
    "variant",
    *(f"{c} CPU ms/batch" for c in CPU_COLUMNS),
    "added CPU ms/batch (JVM + broker) vs off",
    "added as % of off's batch time",
)


def _cpu_ms(spark: SparkSession, pids: dict[str, int]) -> dict[str, float]:
    """CPU ms so far of the processes (``process_ids``) and of the Spark JVM's threads in THREADS
    (threads that ended meanwhile are not counted: the ones measured live for the whole run)."""
    out = {name: cpu_seconds(pid) * 1000 for name, pid in pids.items()}
    out.update(dict.fromkeys(THREADS, 0.0))
    j = jvm(spark)
    mx = j.java.lang.management.ManagementFactory.getThreadMXBean()
    for t in j.java.lang.Thread.getAllStackTraces().keySet():
        name = t.getName()
        for column, prefix in THREADS.items():
            if name.startswith(prefix):
                out[column] += max(0, mx.getThreadCpuTime(t.getId())) / 1e6
    return out


def _metrics(spark: SparkSession, on: bool) -> None:
    # The setting is read from the application's SparkConf when a query starts and as batches
    # report: set on that very object (the SparkContext's, which SparkEnv shares), so both variants
    # share one session, one JVM, one broker. Not through py4j's SparkEnv: reflecting on that class
    # loads classes that need protobuf, which pyspark's classpath lacks.
    spark.sparkContext._jsc.sc().conf().set(METRICS_CONF, str(on).lower())  # noqa: SLF001


def _one(
    spark: SparkSession,
    servers: str,
    pids: dict[str, int],
    topic: str,
    partitions: int,
    total: int,
    variant: str,
    work: Path,
) -> tuple[list[float], dict[str, float]]:
    """One run: the batch times after the first, and the CPU per batch after the first (CPU_COLUMNS)."""
    _metrics(spark, variant in ("metrics", "on"))
    reader = small_batches(spark, servers, topic, partitions)
    if variant in ("commitOffsets", "on"):
        # One group per variant, as a query keeps its group: the consumers' settings include the
        # group, and a group per run would leave the executor's pool a thousand idle consumers
        # more per run (each holding the topic's metadata), which the other variant never pays.
        reader = reader.option("commitOffsets", "true").option("kafka.group.id", f"bench-monitoring-{variant}")
    q = (
        reader.load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(work / "checkpoint"))
        .trigger(processingTime="1 second")
        .start()
    )
    # CPU is counted from the end of the first batch (its readers create every consumer) to the
    # end of the last one with records, as the poll below sees them: within a batch either way.
    first: tuple[int, dict[str, float]] | None = None
    try:
        deadline = time.monotonic() + 600
        while (read := sum(p["numInputRows"] for p in q.recentProgress)) < total:
            if first is None and read > 0:
                first = (len(q.recentProgress), _cpu_ms(spark, pids))
            if q.exception() is not None:
                raise q.exception()  # type: ignore[misc]
            if time.monotonic() > deadline:
                raise RuntimeError(f"{variant}: the query did not read the {total} records of {topic} in 600 s")
            time.sleep(0.05)
        last = (len(q.recentProgress), _cpu_ms(spark, pids))
    finally:
        q.stop()
    progress = [p for p in q.recentProgress if p["numInputRows"] > 0]
    read = sum(p["numInputRows"] for p in progress)
    if read != total:
        raise RuntimeError(f"{variant}: read {read} records of {topic}, expected {total}")
    if first is None or last[0] <= first[0]:
        raise RuntimeError(f"{variant}: no batch after the first to count CPU time over")
    batches = last[0] - first[0]
    cpu = {c: (last[1][c] - first[1][c]) / batches for c in CPU_COLUMNS}
    return [float(p["durationMs"]["triggerExecution"]) for p in progress[1:]], cpu


def run(
    spark: SparkSession, servers: str, pids: dict[str, int], partitions: int, per_partition: int, reps: int
) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]], dict[str, Any]]:
    """Returns the batch-time rows (HEADER), the CPU rows (CPU_HEADER) and the configuration."""
    topic = f"bench-monitoring-{partitions}"
    kafka.create_stream(spark, servers, topic, partitions)
    values = [b"x" * 100] * (partitions * per_partition)
    kafka.produce(spark, servers, topic, values, partitions=[i % partitions for i in range(len(values))])
    runs: dict[str, list[list[float]]] = {v: [] for v in VARIANTS}
    cpus: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="streamctl-bench-monitoring-") as tmp:
        for rep in range(reps):
            for variant in VARIANTS if rep % 2 == 0 else tuple(reversed(VARIANTS)):
                work = Path(tmp) / f"{variant}-{rep}"
                work.mkdir()
                times, cpu = _one(spark, servers, pids, topic, partitions, len(values), variant, work)
                runs[variant].append(times)
                cpus[variant].append(cpu)
    _metrics(spark, True)
    medians = {v: [statistics.median(r) for r in runs[v]] for v in VARIANTS}
    off = statistics.median(medians["off"])
    rows = []
    for v in VARIANTS:
        m = statistics.median(medians[v])
        rows.append(
            (
                v,
                str(reps),
                f"{m:.0f}",
                f"{min(medians[v]):.0f}-{max(medians[v]):.0f}",
                f"{statistics.median(len(r) + 1 for r in runs[v]):.0f}",
                "" if v == "off" else f"{(m - off) / off * 100:+.1f}%",
            )
        )
    cpu = {v: {c: statistics.median(r[c] for r in cpus[v]) for c in CPU_COLUMNS} for v in VARIANTS}
    cpu_rows = []
    for v in VARIANTS:
        added = cpu[v]["Spark JVM"] + cpu[v]["broker"] - cpu["off"]["Spark JVM"] - cpu["off"]["broker"]
        cpu_rows.append(
            (
                v,
                *(f"{cpu[v][c]:.1f}" for c in CPU_COLUMNS),
                "" if v == "off" else f"{added:+.0f}",
                "" if v == "off" else f"{added / off * 100:+.1f}%",
            )
        )
    config = {
        "partitions": partitions,
        "records_per_partition": per_partition,
        "record_bytes": 100,
        "trigger": "processingTime 1 second",
        "maxOffsetsPerTrigger": 2 * partitions,
        "consumer": SCALE_SETTINGS["tuned"]["consumer"],
        "sink": "noop",
        "off": f"{METRICS_CONF}=false, no commitOffsets",
        "metrics": f"{METRICS_CONF}=true, no commitOffsets",
        "commitOffsets": f"{METRICS_CONF}=false, commitOffsets=true",
        "on": f"{METRICS_CONF}=true, commitOffsets=true",
        "runs_per_variant": reps,
        "batch_ms_per_run": medians,
        "cpu_ms_per_batch_per_run": cpus,
    }
    return rows, cpu_rows, config
