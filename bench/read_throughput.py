"""Read throughput: streamctl against Spark's built-in Kafka source on the same topic, same run,
and against a ceiling of plain KafkaConsumers.

N records of V bytes over P partitions, read with Trigger.AvailableNow by two queries: ``count()``,
and a payload query that touches every record (count, sum(length(key)), sum(length(value)),
sum(crc32(value)), max(offset), max(timestamp)). Each source runs at both settings of
bench.common.SETTINGS: "defaults" (no Kafka setting on either side) and "tuned" (the same consumer
settings on both, consumers pooled on both). Every variant runs W times to warm up (once unless
``--read-warm-ups`` says otherwise), then R times in alternating order; every run's result must
equal every other's (and the ceiling's, for the payload query). The Kafka consumers each run created
and the requests they sent are read from the clients' own metrics (bench.common.ClientCounters), and
the CPU seconds the Spark JVM (driver and executor, local mode) and the broker used during each run
from /proc: a run that keeps the cores busy is bound by CPU, one that leaves them idle is waiting.
Each Spark run also reports the time the JVM's JIT compiler spent meanwhile (its CompilationMXBean):
on a machine with few cores that compiling competes with the reading, and it fades only over many
runs (``--read-warm-ups`` sets how many untimed runs come first).

The ceiling (bench/jvm CeilingBench) reads the same topic with one plain KafkaConsumer per
partition, created before the clock starts, on as many threads as Spark has cores, with the
tuned settings and the Spark session's kafka-clients (so the same consumer code as both Spark sources),
computing the payload query's result with a CRC32 over every key and value.
"""

from __future__ import annotations

import os
import statistics
import subprocess
from collections.abc import Callable
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from bench.common import (
    BUILTIN_POOLED_GROUP,
    SETTINGS,
    TUNED_CONSUMER,
    ClientCounters,
    Measurement,
    describe,
    jvm_classpath,
    kafka_options,
    run_available_now,
    session_kafka_clients_jar,
    timed_cpu,
)
from streamctl import options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm

STREAMCTL, BUILTIN = "streamctl", "built-in"
CEILING = "KafkaConsumer ceiling, tuned"
PAYLOAD_COLUMNS = ("count", "key_bytes", "value_bytes", "value_crc", "max_offset", "max_timestamp")


def variant(source: str, settings: str, extra: str = "") -> str:
    return f"{source}{extra}, {settings}"


def _payload(batch: DataFrame) -> tuple[int, ...]:
    r = batch.agg(
        F.count(F.lit(1)),
        F.sum(F.length("key")),
        F.sum(F.length("value")),
        F.sum(F.crc32("value")),
        F.max("offset"),
        F.max(F.unix_millis("timestamp")),
    ).first()
    return tuple(-1 if v is None else int(v) for v in r)  # type: ignore[union-attr]


def _combine(parts: list[tuple[int, ...]]) -> tuple[int, ...]:
    """One result from a run's batches: counts and sums add up, maxima take the largest."""
    if not parts:
        return (0, 0, 0, 0, -1, -1)
    return (
        sum(p[0] for p in parts),
        sum(p[1] for p in parts),
        sum(p[2] for p in parts),
        sum(p[3] for p in parts),
        max(p[4] for p in parts),
        max(p[5] for p in parts),
    )


class Ceiling:
    """CeilingBench in a JVM of its own, reading the topic once per call."""

    def __init__(self, servers: str, topic: str, threads: int, settings: dict[str, str]) -> None:
        # The Spark session's kafka-clients first, so that the ceiling's consumer is the very client both
        # Spark sources read with, not the kafka-clients streamctl is built against.
        classpath = os.pathsep.join([str(session_kafka_clients_jar()), jvm_classpath()])
        command = [
            "java",
            "-cp",
            classpath,
            "streamctl.bench.CeilingBench",
            servers,
            topic,
            str(threads),
            *(f"{k}={v}" for k, v in settings.items()),
        ]
        self._p = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.pid = self._p.pid

    def read(self) -> tuple[float, tuple[int, ...]]:
        assert self._p.stdin is not None and self._p.stdout is not None
        self._p.stdin.write("run\n")
        self._p.stdin.flush()
        for line in self._p.stdout:
            if line.startswith("RESULT "):
                fields = dict(kv.split("=", 1) for kv in line.split()[1:])
                return float(fields["seconds"]), tuple(int(fields[c]) for c in PAYLOAD_COLUMNS)
        raise AssertionError(f"CeilingBench exited ({self._p.wait()}) without a result")

    def close(self) -> None:
        assert self._p.stdin is not None
        self._p.stdin.write("quit\n")
        self._p.stdin.close()
        self._p.wait(timeout=60)


def run(
    spark: SparkSession,
    servers: str,
    workdir: str,
    records: int,
    partitions: int,
    value_size: int,
    reps: int,
    pids: dict[str, int],
    warm_ups: int = 1,
) -> tuple[list[Measurement], dict[str, Any]]:
    """``pids``: the Spark JVM's and the broker's process ids, {"Spark JVM": .., "broker": ..};
    ``warm_ups``: untimed runs of every variant before the timed ones."""
    topic = f"bench-read-{records}"
    cores = spark.sparkContext.defaultParallelism
    config = {
        "records": records,
        "value_bytes": value_size,
        "partitions": partitions,
        "spark_cores": cores,
        "trigger": "AvailableNow, no batch budget",
        "warm_up_runs": warm_ups,
        "repetitions": reps,
        "order": "alternating (reversed every round)",
        "settings": {
            name: {"consumer": describe(s["consumer"]), "consumers": s["consumers"]} for name, s in SETTINGS.items()
        },
        "ceiling": f"one KafkaConsumer per partition, created outside the clock, {cores} threads, "
        f"{describe(TUNED_CONSUMER)}, CRC32 of every key and value, the session's "
        f"{session_kafka_clients_jar().name.removesuffix('.jar')}",
        "queries": {
            "count": "count()",
            "payload": "count, sum(length(key)), sum(length(value)), sum(crc32(value)), max(offset), max(timestamp)",
        },
    }
    print(
        f"read throughput: {records:,} records of {value_size} bytes over {partitions} partitions, Trigger."
        f"AvailableNow, Spark local[{cores}]; {warm_ups} warm-up run(s) then {reps} repetitions per variant in "
        "alternating order; results checked equal",
        flush=True,
    )
    for name, s in SETTINGS.items():
        print(f"  settings '{name}': {describe(s['consumer'])}; consumers: {s['consumers']}", flush=True)
    print(f"  ceiling: {config['ceiling']}", flush=True)
    kafka.create_stream(spark, servers, topic, partitions)
    kafka.produce_synthetic(spark, servers, topic, records, value_size)

    def streamctl(settings: str, **more: str) -> Callable[[], DataFrame]:
        opts = options.source(servers, [topic], starting_offsets="earliest", kafka=SETTINGS[settings]["consumer"])
        return lambda: spark.readStream.format("streamctl").options(**opts).options(**more).load()

    def builtin(settings: str) -> Callable[[], DataFrame]:
        opts = {
            "kafka.bootstrap.servers": servers,
            "subscribe": topic,
            "startingOffsets": "earliest",
            **kafka_options(SETTINGS[settings]["consumer"]),
        }
        if settings == "tuned":
            opts["kafka.group.id"] = BUILTIN_POOLED_GROUP
        return lambda: spark.readStream.format("kafka").options(**opts).load()

    frames: dict[str, Callable[[], DataFrame]] = {}
    for settings in SETTINGS:
        frames[variant(STREAMCTL, settings)] = streamctl(settings)
        frames[variant(BUILTIN, settings)] = builtin(settings)
    aligned = variant(STREAMCTL, "tuned", " time-aligned")
    count_frames = {**frames, aligned: streamctl("tuned", **options.time_aligned())}

    counters = ClientCounters(spark)
    compiler = jvm(spark).java.lang.management.ManagementFactory.getCompilationMXBean()
    measurements: list[Measurement] = []
    run_id = [0]

    def spark_run(
        query: str, name: str, frame: Callable[[], DataFrame], m: Measurement, warm_up: bool
    ) -> tuple[float, tuple[int, ...]]:
        run_id[0] += 1
        parts: list[tuple[int, ...]] = []
        each = (
            (lambda b, _i: parts.append((b.count(),)))
            if query == "count"
            else (lambda b, _i: parts.append(_payload(b)))
        )
        before, compiling = counters.snapshot(), compiler.getTotalCompilationTime()
        seconds, cpu = timed_cpu(lambda: run_available_now(frame(), f"{workdir}/read-{run_id[0]}", each), pids)
        clients = ClientCounters.delta(before, counters.snapshot())
        jit = (compiler.getTotalCompilationTime() - compiling) / 1000
        if not warm_up:
            m.extra.setdefault("clients_per_run", []).append(clients)
            m.extra.setdefault("cpu_s_per_run", []).append({**cpu, "wall_s": round(seconds, 4)})
            m.extra.setdefault("jit_s_per_run", []).append(jit)
        result = (sum(p[0] for p in parts),) if query == "count" else _combine(parts)
        print(
            f"  {name}: {seconds:.2f} s{' (warm-up)' if warm_up else ''}, consumers created "
            f"{clients['consumers_created']}, fetches {clients['fetch_requests']}, other requests "
            f"{clients['other_requests']}, {_cpu(cpu)}, JIT compiling {jit:.2f} s",
            flush=True,
        )
        return seconds, result

    for query, chosen in (("count", count_frames), ("payload", frames)):
        print(f" query {query}: {config['queries'][query]}", flush=True)
        names = list(chosen) + ([CEILING] if query == "payload" else [])
        results = {n: Measurement(f"read {query}", n, records, {"query": config["queries"][query]}) for n in names}
        seen: dict[str, tuple[int, ...]] = {}
        ceiling = Ceiling(servers, topic, cores, TUNED_CONSUMER) if query == "payload" else None
        try:
            for rep in range(-warm_ups, reps):
                for name in names if rep % 2 == 0 else list(reversed(names)):
                    if name == CEILING:
                        assert ceiling is not None
                        read: list[tuple[float, tuple[int, ...]]] = []
                        # Its CPU includes creating its consumers, which its clock leaves out.
                        call, cpu = timed_cpu(
                            lambda: read.append(ceiling.read()),  # noqa: B023 - called at once
                            {"ceiling JVM": ceiling.pid, "broker": pids["broker"]},
                        )
                        seconds, result = read[0]
                        if rep >= 0:
                            runs = results[name].extra.setdefault("cpu_s_per_run", [])
                            runs.append({**cpu, "wall_s": round(call, 4)})
                        print(f"  {name}: {seconds:.2f} s{' (warm-up)' if rep < 0 else ''}, {_cpu(cpu)}", flush=True)
                        result = result[: len(PAYLOAD_COLUMNS)]
                    else:
                        seconds, result = spark_run(query, name, chosen[name], results[name], rep < 0)
                    if result[0] != records:
                        raise AssertionError(f"{name} ({query}) read {result[0]} records, expected {records}")
                    first = next(iter(seen.values()), None)
                    if first is not None and result != first:
                        raise AssertionError(f"{name} ({query}) computed {result}, another variant {first}")
                    seen[name] = result
                    if rep >= 0:
                        results[name].seconds.append(seconds)
        finally:
            if ceiling is not None:
                ceiling.close()
        for m in results.values():
            m.extra["result"] = dict(zip(PAYLOAD_COLUMNS, seen[m.variant], strict=False))
            m.config = {**m.config, **_variant_config(m.variant, cores)}
        measurements += results.values()
    return measurements, config


def _cpu(cpu: dict[str, float]) -> str:
    return "CPU s: " + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())


CPU_HEADER = ("query", "variant", "median s", "JVM CPU s", "broker CPU s", "cores busy", "JIT compiling s")


def cpu_rows(measurements: list[Measurement], cores: int) -> list[tuple[str, ...]]:
    """Per variant, the medians over its runs of the reading JVM's CPU seconds (the Spark JVM, or the
    ceiling's), the broker's, the cores both kept busy: (JVM + broker CPU) / wall, out of ``cores``, and
    the time the Spark JVM's JIT compiler spent during the run (summed over its compiler threads; "-" for
    the ceiling). The ceiling's wall and CPU here are of the whole call, which includes creating its consumers."""
    rows = []
    for m in measurements:
        runs = m.extra.get("cpu_s_per_run", [])
        if not runs:
            continue
        reader = statistics.median(next(v for k, v in r.items() if k not in ("broker", "wall_s")) for r in runs)
        broker = statistics.median(r["broker"] for r in runs)
        busy = statistics.median((sum(r.values()) - r["wall_s"]) / r["wall_s"] for r in runs)
        jit = m.extra.get("jit_s_per_run")
        rows.append(
            (
                m.bench.removeprefix("read "),
                m.variant,
                f"{m.median:.2f}",
                f"{reader:.2f}",
                f"{broker:.2f}",
                f"{busy:.2f} of {cores}",
                f"{statistics.median(jit):.2f}" if jit else "-",
            )
        )
    return rows


def _variant_config(name: str, cores: int) -> dict[str, Any]:
    if name == CEILING:
        return {"consumer": describe(TUNED_CONSUMER), "threads": cores}
    settings = name.rsplit(", ", 1)[1]
    out: dict[str, Any] = {"consumer": describe(SETTINGS[settings]["consumer"])}
    if name.startswith(BUILTIN) and settings == "tuned":
        out["kafka.group.id"] = BUILTIN_POOLED_GROUP
    if "time-aligned" in name:
        out["chooser"] = "time-aligned"
    return out
