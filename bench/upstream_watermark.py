"""``streamctl.with_upstream_watermark``, before and after issue #30: what an event-time windowed
query over an intermediate stream reads per batch, and how long a batch takes.

Before #30 the helper unioned the rows with one marker row per row (the marker branch carrying
the ``withWatermark``), so Spark scanned the source twice per batch; since, ``withWatermark`` goes
on a copy of the ``watermark`` column and its delay is copied onto the event-time column, one
scan. The old helper is rebuilt here (``_union_watermark``) so both run on the same data in the
same session; it ships nowhere.

Data: N framed records of V bytes over P partitions (an intermediate stream, as streamctl's sink
writes it), written in B rounds; after each round one producer's watermark (the wall time, so at
or after every record of the round) goes to every partition. Event time is the record's Kafka
timestamp. Query: ``timestamp AS ts, value, watermark`` -> the helper (delay 0) -> 1 s tumbling
windows with the payload query's aggregates (``count``, ``sum(length(value))``,
``sum(crc32(value))``), update mode into foreachBatch, Trigger.AvailableNow, a budget of one
round per batch (N/B records + P watermarks). Each variant runs once to warm up, then R times in
alternating order. Per run: wall time; per batch with input (the first left out, as it also
starts the query): the source's ``numInputRows``, the records the Kafka consumers returned (their
JMX ``records-consumed-total`` in the Spark JVM) and ``triggerExecution``. Every run must count
every record in the same windows with the same sums, reach the same final watermark and run B
batches with input.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

import streamctl
from bench.common import ClientCounters, Measurement, run_available_now
from streamctl import options
from streamctl_testing import control, kafka

BEFORE = "before #30: union with marker rows"
AFTER = "after #30: one scan"
HEADER = (
    "variant",
    "run median s",
    "min-max s",
    "rows read per batch (numInputRows)",
    "Kafka records consumed per batch",
    "batch median ms",
    "batches with input",
)


def _union_watermark(
    df: DataFrame, event_time: str, delay: str = "0 seconds", watermark: str = "watermark"
) -> DataFrame:
    """``with_upstream_watermark`` as it was before #30 (python/streamctl/control.py at a920193)."""
    marker = "__streamctl_upstream_watermark"
    markers = (
        df.where(F.col(watermark).isNotNull())
        .select(
            *[
                (F.col(watermark) if f.name == event_time else F.lit(None).cast(f.dataType)).alias(f.name)
                for f in df.schema.fields
            ],
            F.lit(True).alias(marker),
        )
        .withWatermark(event_time, delay)
    )
    rows = df.withColumn(marker, F.lit(None).cast("boolean"))
    keep: Column = F.when(F.col(marker).isNull(), (F.rand(0) + F.lit(1.0)) > F.lit(0.0)).otherwise(F.lit(False))
    return markers.union(rows).where(keep).drop(marker)


def _produce(
    spark: SparkSession, servers: str, stream: str, partitions: int, rounds: int, per_round: int, value_size: int
) -> int:
    """Writes the rounds; returns the last watermark sent (epoch ms)."""
    kafka.create_stream(spark, servers, stream, partitions)
    mark = 0
    for _ in range(rounds):
        control.produce_synthetic_framed(spark, servers, stream, per_round, value_size)
        mark = int(time.time() * 1000)
        control.send_watermark(spark, servers, stream, "bench", 1, mark)
    return mark


def _consumed(counters: ClientCounters) -> float:
    return sum(counters.records_consumed().values())


def _one_run(
    spark: SparkSession, servers: str, stream: str, budget: int, variant: str, checkpoint: str, counters: ClientCounters
) -> dict[str, Any]:
    events = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", max_records_per_batch=budget))
        .options(**options.intermediate(stream))
        .load()
        .select(F.col("timestamp").alias("ts"), "value", "watermark")
    )
    marked = _union_watermark(events, "ts") if variant == BEFORE else streamctl.with_upstream_watermark(events, "ts")
    windows = marked.groupBy(F.window("ts", "1 second")).agg(
        F.count("*").alias("n"), F.sum(F.length("value")).alias("bytes"), F.sum(F.crc32("value")).alias("crc")
    )
    found: dict[int, tuple[int, int, int]] = {}

    def upsert(batch: DataFrame, _id: int) -> None:
        for r in batch.collect():
            found[int(r.window.start.timestamp() * 1000)] = (r.n, r.bytes, r.crc)

    before = _consumed(counters)
    started = time.perf_counter()
    progress = run_available_now(windows, checkpoint, upsert, output_mode="update")
    seconds = time.perf_counter() - started
    consumed = _consumed(counters) - before
    with_input = [p for p in progress if p["numInputRows"] > 0]
    steady = with_input[1:] or with_input
    return {
        "seconds": seconds,
        "windows": found,
        "batches": len(with_input),
        "watermark": progress[-1]["eventTime"].get("watermark"),
        "rows_per_batch": statistics.median(p["numInputRows"] for p in steady),
        "consumed_per_batch": consumed / max(1, len(with_input)),
        "batch_ms": statistics.median(p["durationMs"]["triggerExecution"] for p in steady),
    }


def run(
    spark: SparkSession,
    servers: str,
    workdir: str,
    records: int,
    partitions: int,
    value_size: int,
    rounds: int,
    reps: int,
) -> tuple[list[tuple[str, ...]], list[dict[str, Any]], dict[str, Any]]:
    """Both variants on one stream; returns the table rows, one JSON result per variant and the configuration."""
    per_round = records // rounds
    records = per_round * rounds
    stream = f"bench-upstream-{records}"
    config = {
        "records": records,
        "partitions": partitions,
        "value_bytes": value_size,
        "rounds": rounds,
        "records_per_batch": per_round,
        "max_records_per_batch": per_round + partitions,
        "window": "1 second",
        "delay": "0 seconds",
        "output_mode": "update, foreachBatch",
        "trigger": "AvailableNow",
        "warm_up_runs": 1,
        "repetitions": reps,
    }
    print(
        f"upstream watermark: {records:,} framed records of {value_size} B over {partitions} partitions in "
        f"{rounds} rounds, a watermark on every partition after each; 1 s windows with the payload aggregates; "
        f"{reps} repetitions per variant in alternating order after one warm-up each",
        flush=True,
    )
    last_mark = _produce(spark, servers, stream, partitions, rounds, per_round, value_size)
    counters = ClientCounters(spark)
    names = [BEFORE, AFTER]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    reference: dict[str, Any] | None = None
    run_id = 0
    for rep in range(-1, reps):
        for name in names if rep % 2 == 0 else reversed(names):
            run_id += 1
            r = _one_run(spark, servers, stream, per_round + partitions, name, f"{workdir}/upstream-{run_id}", counters)
            counted = sum(n for n, _, _ in r["windows"].values())
            if counted != records or r["batches"] != rounds:
                raise AssertionError(
                    f"{name}: counted {counted} of {records} records in {r['batches']} batches "
                    f"with input, expected {rounds}"
                )
            if reference is None:
                reference = r
            elif (r["windows"], r["watermark"]) != (reference["windows"], reference["watermark"]):
                raise AssertionError(
                    f"{name}: other windows or final watermark than the first run "
                    f"({r['watermark']} vs {reference['watermark']})"
                )
            if rep >= 0:
                runs[name].append(r)
            print(
                f"  {name}: {r['seconds']:.2f} s, {r['rows_per_batch']:,.0f} rows and {r['consumed_per_batch']:,.0f}"
                f" Kafka records per batch, batch {r['batch_ms']:,.0f} ms{' (warm-up)' if rep < 0 else ''}",
                flush=True,
            )
    kafka.delete_stream(spark, servers, stream)
    config["last_watermark_sent_ms"] = last_mark
    rows, data = [], []
    for name in names:
        m = Measurement("upstream watermark", name, records, seconds=[r["seconds"] for r in runs[name]])
        med = {
            k: statistics.median(r[k] for r in runs[name]) for k in ("rows_per_batch", "consumed_per_batch", "batch_ms")
        }
        rows.append(
            (
                name,
                f"{m.median:.2f}",
                m.spread,
                f"{med['rows_per_batch']:,.0f}",
                f"{med['consumed_per_batch']:,.0f}",
                f"{med['batch_ms']:,.0f}",
                str(rounds),
            )
        )
        data.append({**m.to_json(), **med, "batch_ms_per_run": [r["batch_ms"] for r in runs[name]]})
    before, after = data
    rows.append(
        (
            "before / after",
            f"{before['median_s'] / after['median_s']:.2f}x",
            "",
            f"{before['rows_per_batch'] / after['rows_per_batch']:.2f}x",
            f"{before['consumed_per_batch'] / max(1.0, after['consumed_per_batch']):.2f}x",
            f"{before['batch_ms'] / after['batch_ms']:.2f}x",
            "",
        )
    )
    return rows, data, config
