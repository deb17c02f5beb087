"""End-to-end two-query pipeline: records/s through an intermediate stream, and how long a
watermark takes to cross it.

Throughput: N records (P partitions) -> query 1 (source, withWatermark, sink to an intermediate
stream of P partitions, Trigger.AvailableNow, max.records.per.batch N/10) -> query 2 (reads the
intermediate stream, counts in foreachBatch). Both queries run at once in one SparkSession; the
time is from starting query 1 to query 2 having counted the N-th record. The built-in variant
is the same pipeline with format("kafka") on both sides (maxOffsetsPerTrigger N/10). streamctl's
query 2 also stops by itself on the end-of-stream query 1 sends; that time is printed too.

Latency: a live pipeline, both queries on a processing-time trigger of T seconds, fed by a
steady producer (event time = Kafka timestamp = now). Query 1's watermark W "advances" at the
start of the first batch that reports W in its progress; it has crossed when query 2's
source reports a reconciled watermark >= W (end of that batch), and when rows of query 2
carry it (end of the foreachBatch that saw it). Latency is reported in seconds and in
trigger intervals, median and max over every advance after a warm-up.
"""

from __future__ import annotations

import statistics
import threading
import time
from datetime import datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from bench.common import Measurement, table
from streamctl import options
from streamctl_testing import kafka

BUILTIN = "built-in"
TIMEOUT = 600


def _counter(df: DataFrame, checkpoint: str, trigger: dict[str, Any], state: dict[str, Any]) -> StreamingQuery:
    def each(batch: DataFrame, _id: int) -> None:
        state["rows"] += batch.count()
        if state["rows"] >= state["target"] and state.get("done") is None:
            state["done"] = time.perf_counter()

    return df.writeStream.foreachBatch(each).option("checkpointLocation", checkpoint).trigger(**trigger).start()


def _wait_for(state: dict[str, Any], queries: list[StreamingQuery], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while state.get("done") is None:
        for q in queries:
            if q.exception() is not None:
                raise q.exception()  # type: ignore[misc]
        if time.monotonic() > deadline:
            raise AssertionError(f"pipeline counted {state['rows']} of {state['target']} records in {timeout:.0f} s; "
                                 + "; ".join(_describe(q) for q in queries))
        time.sleep(0.05)


def _describe(q: StreamingQuery) -> str:
    """Where a query stands, for a benchmark that did not finish."""
    p = q.lastProgress
    if p is None:
        return f"query {q.id}: active={q.isActive}, no batch yet"
    ends = [s["endOffset"] for s in p["sources"]]
    return (f"query {q.id}: active={q.isActive}, batch {p['batchId']} read {p['numInputRows']} rows, "
            f"status {q.status['message']!r}, source end offsets {ends}")


def _streamctl_queries(spark: SparkSession, servers: str, source: str, mid: str,
                       records: int) -> tuple[DataFrame, DataStreamWriter]:
    down = (spark.readStream.format("streamctl")
            .options(**options.source(servers, [mid], starting_offsets="earliest"))
            .options(**options.intermediate(mid)).load())
    up = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [source], starting_offsets="earliest", max_records_per_batch=records // 10))
        .load()
        .withWatermark("timestamp", "0 seconds")
        .select("key", "value")
        .writeStream.format("streamctl").options(**options.sink(servers, mid))
    )
    return down, up


def _builtin_queries(spark: SparkSession, servers: str, source: str, mid: str,
                     records: int) -> tuple[DataFrame, DataStreamWriter]:
    down = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", servers).option("subscribe", mid)
            .option("startingOffsets", "earliest").load())
    up = (
        spark.readStream.format("kafka").option("kafka.bootstrap.servers", servers).option("subscribe", source)
        .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", str(records // 10)).load()
        .withWatermark("timestamp", "0 seconds")
        .select("key", "value")
        .writeStream.format("kafka").option("kafka.bootstrap.servers", servers).option("topic", mid)
    )
    return down, up


def _run(name: str, down_df: DataFrame, up: DataStreamWriter, chk: str, records: int,
         stops_itself: bool) -> tuple[float, float | None]:
    """Starts query 2 (counting ``down_df``), then query 1 (``up``, AvailableNow); returns the seconds
    from query 1's start to query 2's last record and, when ``stops_itself``, to query 2 stopping by
    itself on end-of-stream."""
    state: dict[str, Any] = {"rows": 0, "target": records}
    down = _counter(down_df, f"{chk}/down", {"processingTime": "0 seconds"}, state)
    started = time.perf_counter()
    up_query = up.option("checkpointLocation", f"{chk}/up").trigger(availableNow=True).start()
    stopped = None
    try:
        _wait_for(state, [up_query, down], timeout=TIMEOUT)
        if stops_itself:
            if not down.awaitTermination(120):
                raise AssertionError("the downstream query did not stop by itself on end-of-stream")
            stopped = time.perf_counter() - started
            up_query.awaitTermination()
    finally:
        up_query.stop()
        down.stop()
    if state["rows"] != records:
        raise AssertionError(f"{name} pipeline counted {state['rows']} records, expected {records}")
    return state["done"] - started, stopped


def throughput(spark: SparkSession, servers: str, workdir: str, records: int, partitions: int, value_size: int,
               reps: int) -> list[Measurement]:
    print(f"pipeline throughput: {records:,} records of {value_size} bytes, {partitions} partitions, query 1 "
          f"(AvailableNow, {records // 10:,} per batch) -> intermediate stream ({partitions} partitions) -> query 2 "
          f"(count), both running; {reps} repetitions per variant in alternating order", flush=True)
    source = f"bench-pipe-{records}"
    kafka.create_stream(spark, servers, source, partitions)
    kafka.produce_synthetic(spark, servers, source, records, value_size)
    names = ["streamctl", BUILTIN]
    results = {name: Measurement("pipeline", name, records) for name in names}
    for rep in range(reps):
        for name in names if rep % 2 == 0 else reversed(names):
            mid, chk = f"bench-pipe-mid-{name}-{rep}", f"{workdir}/pipe-{name}-{rep}"
            kafka.create_stream(spark, servers, mid, partitions)
            queries = _builtin_queries if name == BUILTIN else _streamctl_queries
            seconds, stopped = _run(name, *queries(spark, servers, source, mid, records), chk, records,
                                    stops_itself=name != BUILTIN)
            by_itself = "" if stopped is None else f", query 2 stopped by itself at {stopped:.2f} s"
            print(f"  {name}: {seconds:.2f} s to the last record{by_itself}", flush=True)
            results[name].seconds.append(seconds)
    return list(results.values())


def _epoch_ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _batch_end_ms(p: Any) -> int:
    return _epoch_ms(p.timestamp) + int(p.durationMs.get("triggerExecution", 0))


def latency(spark: SparkSession, servers: str, workdir: str, partitions: int, trigger_s: float, seconds: float,
            rate: int) -> str:
    warmup = max(3 * trigger_s, 5.0)
    print(f"pipeline watermark latency: live producer at {rate:,} records/s, {partitions} partitions, both queries "
          f"on a {trigger_s:g} s processing-time trigger, query 1 withWatermark(timestamp, 0 s), "
          f"{seconds:g} s measured after {warmup:g} s warm-up", flush=True)
    source, mid = "bench-live-in", "bench-live-mid"
    kafka.create_stream(spark, servers, source, partitions)
    kafka.create_stream(spark, servers, mid, partitions)
    trigger = {"processingTime": f"{int(trigger_s * 1000)} milliseconds"}

    stop = threading.Event()

    def produce() -> None:
        tick, n = 0.1, 0
        while not stop.is_set():
            chunk = max(1, int(rate * tick))
            keys = [str(n + i).encode() for i in range(chunk)]
            kafka.produce(spark, servers, source, [b"x" * 100] * chunk, keys=keys)
            n += chunk
            stop.wait(tick)

    seen: list[tuple[int, int]] = []  # (wall ms at the end of query 2's batch, largest row watermark ms)

    def each(batch: DataFrame, _id: int) -> None:
        w = batch.agg(F.max(F.unix_millis("watermark")).alias("w")).first()["w"]
        if w is not None:
            seen.append((int(time.time() * 1000), int(w)))

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    down = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [mid], starting_offsets="earliest"))
        .options(**options.intermediate(mid)).load()
        .writeStream.foreachBatch(each).option("checkpointLocation", f"{workdir}/live-down").trigger(**trigger).start()
    )
    up = (
        spark.readStream.format("streamctl").options(**options.source(servers, [source], starting_offsets="earliest"))
        .load().withWatermark("timestamp", "0 seconds").select("key", "value")
        .writeStream.format("streamctl").options(**options.sink(servers, mid))
        .option("checkpointLocation", f"{workdir}/live-up").trigger(**trigger).start()
    )
    measure_from = int((time.time() + warmup) * 1000)
    try:
        time.sleep(warmup + seconds)
        stop.set()
        producer.join()
        time.sleep(3 * trigger_s)  # the last advances cross
    finally:
        stop.set()
        ups, downs = list(up.recentProgress), list(down.recentProgress)
        up.stop()
        down.stop()

    advances: dict[int, int] = {}  # watermark ms -> wall ms at the start of the batch it took effect in
    for p in ups:
        w = p.eventTime.get("watermark")
        if w is not None and _epoch_ms(w) > 0:
            advances.setdefault(_epoch_ms(w), _epoch_ms(p.timestamp))
    reported = [(_batch_end_ms(p), int(p.sources[0].metrics["watermark"])) for p in downs
                if p.sources and "watermark" in (p.sources[0].metrics or {})]

    def crossed(at: list[tuple[int, int]], w: int) -> int | None:
        return next((t for t, v in at if v >= w), None)

    rows = []
    last_measured = int((time.time() - 3 * trigger_s) * 1000)
    measured = [(w, t) for w, t in advances.items() if measure_from <= t <= last_measured]
    for label, at in (("query 2 source progress (reconciled)", reported), ("query 2 rows (watermark column)", seen)):
        seen_at = [(crossed(at, w), t) for w, t in measured]
        lat = [c - t for c, t in seen_at if c is not None]
        missing = len(seen_at) - len(lat)
        if not lat:
            rows.append((label, "0", "-", "-", "-", "-", str(missing)))
            continue
        med, worst = statistics.median(lat) / 1000, max(lat) / 1000
        rows.append((label, str(len(lat)), f"{med:.2f}", f"{worst:.2f}", f"{med / trigger_s:.2f}",
                     f"{worst / trigger_s:.2f}", str(missing)))
        print(f"  {label}: median {med:.2f} s, max {worst:.2f} s over {len(lat)} advances", flush=True)
    return table(rows, ("watermark seen at", "advances", "median s", "max s", "median triggers", "max triggers",
                        "never seen"))
