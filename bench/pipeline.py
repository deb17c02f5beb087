"""End-to-end two-query pipeline: records/s through an intermediate stream, per-record latency
from the producer to the downstream query, and how long a watermark takes to cross it.

Throughput: N records (P partitions) -> query 1 (source, withWatermark, sink to an intermediate
stream of P partitions, Trigger.AvailableNow, N/10 records per batch) -> query 2 (reads the
intermediate stream, counts in foreachBatch). Both queries run at once in one SparkSession; the
time is from starting query 1 to query 2 having counted the N-th record. The built-in variant
is the same pipeline with format("kafka") on both sides (maxOffsetsPerTrigger N/10). Both run
at "defaults" and "tuned" (bench.common.PIPELINE_SETTINGS: the read's tuned settings but 1,000
records a poll, where the built-in is fastest in small batches). streamctl's query 2 also stops
by itself on the end-of-stream query 1 sends; that time is printed too. Each variant writes to an
intermediate stream of its own, kept over its runs, and each run's query 2 starts where the run
before ended: as in a pipeline that runs for good, both connectors can reuse the consumers they
made for it (the built-in caches them by group and partition, which "tuned" fixes; at its
defaults every query has a group of its own).

End-to-end latency: the same two queries live, both on a processing-time trigger of T seconds,
fed at a fixed rate; each record's key carries the wall time just before it was sent, and its
latency is from then to the end of query 2's foreachBatch that received it; p50/p99/max over the
records sent after a warm-up, per variant; every record sent must reach query 2.

Watermark latency (streamctl only, issue #5): query 1's watermark W "advances" at the start of
the first batch that reports W in its progress; it has crossed when query 2's source reports a
reconciled watermark >= W (end of that batch), and when rows of query 2 carry it (end of the
foreachBatch that saw it); median and max in seconds and trigger intervals.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from datetime import datetime
from typing import Any, NamedTuple

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from bench.common import (
    BUILTIN_POOLED_GROUP,
    PIPELINE_SETTINGS,
    Measurement,
    alternate,
    describe,
    jvm_classpath,
    kafka_options,
    run_jvm_main,
)
from streamctl import options
from streamctl_testing import kafka

BUILTIN = "built-in"
# streamctl with a transactional intermediate stream read with read_committed (docs/exactly-once.md).
TRANSACTIONAL = "streamctl transactional"
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
            raise AssertionError(
                f"pipeline counted {state['rows']} of {state['target']} records in {timeout:.0f} s; "
                + "; ".join(_describe(q) for q in queries)
            )
        time.sleep(0.05)


def _describe(q: StreamingQuery) -> str:
    """Where a query stands, for a benchmark that did not finish."""
    p = q.lastProgress
    if p is None:
        return f"query {q.id}: active={q.isActive}, no batch yet"
    ends = [s["endOffset"] for s in p["sources"]]
    return (
        f"query {q.id}: active={q.isActive}, batch {p['batchId']} read {p['numInputRows']} rows, "
        f"status {q.status['message']!r}, source end offsets {ends}"
    )


class _Hop(NamedTuple):
    """A pipeline's two queries, as both connectors build them: ``source`` -> query 1 -> ``mid`` ->
    query 2, which starts reading ``mid`` at ``mid_start``; ``per_batch`` records a batch of query 1."""

    servers: str
    source: str
    mid: str
    per_batch: int | None
    settings: str
    mid_start: str = "earliest"


def _queries(spark: SparkSession, src: str, hop: _Hop) -> tuple[DataFrame, DataStreamWriter]:
    """Query 2's input and query 1's writer, of the variant ``src`` names."""
    if src == BUILTIN:
        return _builtin_queries(spark, hop)
    return _streamctl_queries(spark, hop, transactional=src == TRANSACTIONAL)


def _streamctl_queries(spark: SparkSession, hop: _Hop, transactional: bool) -> tuple[DataFrame, DataStreamWriter]:
    servers, source, mid, per_batch, settings, mid_start = hop
    consumer, producer = PIPELINE_SETTINGS[settings]["consumer"], PIPELINE_SETTINGS[settings]["producer"]
    reader = {**consumer, "isolation.level": "read_committed"} if transactional else consumer
    down = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [mid], starting_offsets=mid_start, kafka=reader))
        .options(**options.intermediate(mid))
        .load()
    )
    up = (
        spark.readStream.format("streamctl")
        .options(
            **options.source(
                servers, [source], starting_offsets="earliest", max_records_per_batch=per_batch, kafka=consumer
            )
        )
        .load()
        .withWatermark("timestamp", "0 seconds")
        .select("key", "value")
        .writeStream.format("streamctl")
        .options(**options.sink(servers, mid, intermediate=True, transactional=transactional, kafka=producer))
    )
    return down, up


def _builtin_queries(spark: SparkSession, hop: _Hop) -> tuple[DataFrame, DataStreamWriter]:
    servers, source, mid, per_batch, settings, mid_start = hop
    consumer = kafka_options(PIPELINE_SETTINGS[settings]["consumer"])
    producer = kafka_options(PIPELINE_SETTINGS[settings]["producer"])
    pooled = settings == "tuned"
    down = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", mid)
        .option("startingOffsets", mid_start)
        .options(**consumer)
        .options(**({"kafka.group.id": f"{BUILTIN_POOLED_GROUP}-down"} if pooled else {}))
        .load()
    )
    up_source = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .options(**consumer)
        .options(**({"kafka.group.id": f"{BUILTIN_POOLED_GROUP}-up"} if pooled else {}))
    )
    if per_batch is not None:
        up_source = up_source.option("maxOffsetsPerTrigger", str(per_batch))
    up = (
        up_source.load()
        .withWatermark("timestamp", "0 seconds")
        .select("key", "value")
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("topic", mid)
        .options(**producer)
    )
    return down, up


def _run(
    name: str, down_df: DataFrame, up: DataStreamWriter, chk: str, records: int, stops_itself: bool
) -> tuple[float, float | None]:
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


def _repeated(reps: int, records: int, value_size: int, partitions: int) -> dict[str, Any]:
    """What a throughput benchmark's configuration says of its data, its repetitions and its settings."""
    return {
        "records": records,
        "value_bytes": value_size,
        "partitions": partitions,
        "warm_up_runs": 1,
        "repetitions": reps,
        "order": "rotating (each round starts one variant further along the list)",
        "settings": {
            name: {"consumer": describe(s["consumer"]), "producer": describe(s["producer"])}
            for name, s in PIPELINE_SETTINGS.items()
        },
    }


def _backlog(spark: SparkSession, servers: str, stream: str, records: int, partitions: int, value_size: int) -> str:
    """A new stream of ``partitions`` holding ``records`` synthetic records; returns its name."""
    kafka.create_stream(spark, servers, stream, partitions)
    kafka.produce_synthetic(spark, servers, stream, records, value_size)
    return stream


def throughput(
    spark: SparkSession, servers: str, workdir: str, records: int, partitions: int, value_size: int, reps: int
) -> tuple[list[Measurement], dict[str, Any]]:
    per_batch = records // 10
    config = {
        **_repeated(reps, records, value_size, partitions),
        "query_1": f"source -> withWatermark(timestamp, 0 s) -> sink to an intermediate stream of {partitions} "
        f"partitions, Trigger.AvailableNow, {per_batch:,} records per batch (streamctl "
        "max.records.per.batch, built-in maxOffsetsPerTrigger)",
        "query_2": "reads the intermediate stream, count() in foreachBatch, processing-time trigger 0 s",
        "time": "from starting query 1 to query 2 having counted the last record (query 2 started first)",
        "intermediate_stream": "one per variant, kept over its runs; each run's query 2 starts at its end",
    }
    print(
        f"pipeline throughput: {records:,} records of {value_size} bytes, {partitions} partitions, query 1 "
        f"(AvailableNow, {per_batch:,} per batch) -> intermediate stream ({partitions} partitions) -> query 2 "
        f"(count), both running; one warm-up then {reps} repetitions per variant in alternating order; "
        "counts checked",
        flush=True,
    )
    source = _backlog(spark, servers, f"bench-pipe-{records}", records, partitions, value_size)
    names = [f"{src}, {settings}" for settings in PIPELINE_SETTINGS for src in ("streamctl", TRANSACTIONAL, BUILTIN)]
    results = {
        name: Measurement("pipeline", name, records, config["settings"][name.rsplit(", ", 1)[1]]) for name in names
    }
    run_id = [0]
    mids = {name: f"bench-pipe-mid-{i}" for i, name in enumerate(names)}
    for mid in mids.values():
        kafka.create_stream(spark, servers, mid, partitions)

    def one(name: str, _warm_up: bool) -> float:
        run_id[0] += 1
        src, settings = name.rsplit(", ", 1)
        mid, chk = mids[name], f"{workdir}/pipe-{run_id[0]}"
        # Where the variant's last run ended: query 2 starts before query 1 writes, so "latest"
        # could be taken after query 1's first records.
        start = json.dumps({mid: {str(p): o for p, o in kafka.upcoming_offsets(spark, servers, mid).items()}})
        pair = _queries(spark, src, _Hop(servers, source, mid, per_batch, settings, start))
        seconds, stopped = _run(name, *pair, chk, records, stops_itself=src != BUILTIN)
        if stopped is not None:
            print(f"    (query 2 stopped by itself on end-of-stream at {stopped:.2f} s)", flush=True)
        return seconds

    try:
        alternate(names, reps, one, results)
    finally:
        for mid in mids.values():
            kafka.delete_stream(spark, servers, mid)
    return list(results.values()), config


def _sink_query(
    spark: SparkSession, servers: str, source: str, out: str, per_batch: int, settings: str, src: str
) -> DataStreamWriter:
    """Query 1 of the pipeline alone: the source, then the sink ``src`` names into ``out``."""
    return _queries(spark, src, _Hop(servers, source, out, per_batch, settings))[1]


def sink_throughput(
    spark: SparkSession, servers: str, workdir: str, records: int, partitions: int, value_size: int, reps: int
) -> tuple[list[Measurement], dict[str, Any]]:
    """The sink's own cost (issue #32 asks transactional >= 0.8x at-least-once): query 1 of the pipeline
    alone, no reader of what it writes. AvailableNow: seconds from start to the query's end. 1 s
    triggers: the median addBatch (ms) of its batches over the same backlog, as Measurement seconds."""
    per_batch = records // 10
    config = {
        **_repeated(reps, records, value_size, partitions),
        "query": f"source -> withWatermark(timestamp, 0 s) -> sink to an intermediate stream of {partitions} "
        f"partitions, {per_batch:,} records per batch; no query reads it",
        "available_now": "seconds from starting the query to its end (Trigger.AvailableNow)",
        "one_second_triggers": "median addBatch of the batches (processing-time trigger 1 s, same backlog)",
        # Per transactional run: the transactional ids the broker holds for it (one per writer
        # partition, whatever the number of batches: issue #32's broker cost).
        "transactional_ids": [],
    }
    print(
        f"sink throughput: {records:,} records of {value_size} bytes, {partitions} partitions, query 1 alone "
        f"({per_batch:,} per batch) at AvailableNow and at 1 s triggers; one warm-up then {reps} repetitions "
        "per variant in alternating order; counts checked",
        flush=True,
    )
    source = _backlog(spark, servers, f"bench-sink-{records}", records, partitions, value_size)
    sinks = ("streamctl", TRANSACTIONAL, BUILTIN)
    names = [f"{src}, {settings}" for settings in PIPELINE_SETTINGS for src in sinks]
    names += [f"{src} at 1 s triggers, tuned" for src in sinks]
    # At 1 s triggers a Measurement's seconds are one batch's addBatch, so its records are one batch's.
    results = {
        name: Measurement(
            "sink", name, per_batch if "triggers" in name else records, config["settings"][name.rsplit(", ", 1)[1]]
        )
        for name in names
    }
    run_id = [0]

    def one(name: str, _warm_up: bool) -> float:
        run_id[0] += 1
        variant, settings = name.rsplit(", ", 1)
        src = variant.removesuffix(" at 1 s triggers")
        out, chk = f"bench-sink-out-{run_id[0]}", f"{workdir}/sink-{run_id[0]}"
        kafka.create_stream(spark, servers, out, partitions)
        writer = _sink_query(spark, servers, source, out, per_batch, settings, src).option("checkpointLocation", chk)
        timed_batches = src != variant
        started = time.perf_counter()
        if timed_batches:
            q = writer.trigger(processingTime="1 second").start()
            deadline = time.monotonic() + TIMEOUT
            while sum(p["numInputRows"] for p in q.recentProgress) < records:
                if q.exception() is not None:
                    raise q.exception()  # type: ignore[misc]
                if time.monotonic() > deadline:
                    raise AssertionError(f"{name}: {_describe(q)}")
                time.sleep(0.05)
            q.stop()
        else:
            q = writer.trigger(availableNow=True).start()
            q.awaitTermination()
            if q.exception() is not None:
                raise q.exception()  # type: ignore[misc]
        elapsed = time.perf_counter() - started
        batches = [p for p in q.recentProgress if p["numInputRows"] > 0]
        seconds = statistics.median(p["durationMs"]["addBatch"] for p in batches) / 1000 if timed_batches else elapsed
        # Offsets, not records: control messages and transaction markers take offsets too.
        written = sum(kafka.upcoming_offsets(spark, servers, out).values())
        if src == TRANSACTIONAL:
            # The broker's cost: the ids it keeps for the run (they name the topic), against its batches.
            ids = len(kafka.transaction_coordinators(spark, servers, out))
            config["transactional_ids"].append({"variant": name, "batches": len(batches), "ids": ids})
            print(f"  {name}: {ids} transactional ids on the broker after {len(batches)} batches", flush=True)
        kafka.delete_stream(spark, servers, out)
        if written < records:
            raise AssertionError(f"{name} wrote {written} records, expected {records}")
        return seconds

    alternate(names, reps, one, results)
    return list(results.values()), config


def _percentile(samples: list[tuple[float, int]], q: float) -> float:
    """The q-quantile of latencies given as (latency, how many records had it)."""
    ordered = sorted(samples)
    total = sum(n for _, n in ordered)
    rank, seen = q * total, 0
    for value, n in ordered:
        seen += n
        if seen >= rank:
            return value
    return ordered[-1][0]


def e2e_latency(
    spark: SparkSession, servers: str, workdir: str, partitions: int, trigger_s: float, seconds: float, rate: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Produce -> downstream sink latency of every record through the two-query pipeline, at a
    fixed input rate, both queries on the same processing-time trigger, per variant."""
    warmup = max(3 * trigger_s, 5.0)
    config = {
        "rate_records_per_s": rate,
        "partitions": partitions,
        "trigger_s": trigger_s,
        "measured_s": seconds,
        "warm_up_s": warmup,
        "value_bytes": 100,
        "pipeline": "producer -> stream -> query 1 (source -> withWatermark(timestamp, 0 s) -> sink) -> intermediate "
        "stream -> query 2 (source -> foreachBatch)",
        "latency": "from just before the producer's send (its time is in the record key; bench/jvm RateProducer, "
        "its own JVM) to the end of query 2's "
        "foreachBatch that received the record, per record; records produced in the warm-up excluded",
        "settings": {
            name: {"consumer": describe(s["consumer"]), "producer": describe(s["producer"])}
            for name, s in PIPELINE_SETTINGS.items()
        },
    }
    print(
        f"pipeline end-to-end latency: producer at {rate:,} records/s into {partitions} partitions, query 1 -> "
        f"intermediate stream -> query 2, both on a {trigger_s:g} s processing-time trigger; {seconds:g} s measured "
        f"after {warmup:g} s warm-up per variant; every record produced must reach query 2",
        flush=True,
    )
    trigger = {"processingTime": f"{int(trigger_s * 1000)} milliseconds"}
    jvm_classpath()  # resolved once by Maven before the first producer starts
    rows: list[dict[str, Any]] = []
    names = [
        "streamctl, defaults",
        f"{BUILTIN}, defaults",
        f"{BUILTIN}, tuned",
        "streamctl, tuned",
        f"{TRANSACTIONAL}, tuned",
    ]
    for i, name in enumerate(names):
        row = _e2e_one(spark, servers, workdir, i, name, partitions, trigger, warmup, seconds, rate)
        row["config"] = config["settings"][name.rsplit(", ", 1)[1]]
        rows.append(row)
    return rows, config


def _e2e_one(
    spark: SparkSession,
    servers: str,
    workdir: str,
    i: int,
    name: str,
    partitions: int,
    trigger: dict[str, str],
    warmup: float,
    seconds: float,
    rate: int,
) -> dict[str, Any]:
    """One variant of e2e_latency: its own source and intermediate stream, deleted afterwards."""
    src, settings = name.rsplit(", ", 1)
    source, mid = f"bench-e2e-in-{i}", f"bench-e2e-mid-{i}"
    kafka.create_stream(spark, servers, source, partitions)
    kafka.create_stream(spark, servers, mid, partitions)
    sent_at: list[tuple[int, float, int]] = []  # (send ms, latency ms, records)
    received = [0]
    produced = [0]

    def each(batch: DataFrame, _id: int) -> None:
        sent = batch.groupBy(F.substring_index(F.col("key").cast("string"), ":", 1).alias("t")).count().collect()
        now = time.time() * 1000
        for r in sent:
            received[0] += r["count"]
            t = int(r["t"])
            sent_at.append((t, now - t, r["count"]))

    down_df, up = _queries(spark, src, _Hop(servers, source, mid, None, settings))
    down = (
        down_df.writeStream.foreachBatch(each)
        .option("checkpointLocation", f"{workdir}/e2e-down-{i}")
        .trigger(**trigger)
        .start()
    )
    up_query = up.option("checkpointLocation", f"{workdir}/e2e-up-{i}").trigger(**trigger).start()
    try:
        # The producer runs in a JVM of its own, so its rate does not depend on the Spark JVM.
        out = run_jvm_main("RateProducer", servers, source, str(partitions), str(rate), str(warmup + seconds), "100")
        fields = dict(kv.split("=", 1) for kv in out.split("PRODUCED ", 1)[1].split())
        produced[0], achieved, started_ms = int(fields["records"]), float(fields["rate"]), int(fields["started_ms"])
        deadline = time.monotonic() + 120
        while received[0] < produced[0] and time.monotonic() < deadline:
            for q in (up_query, down):
                if q.exception() is not None:
                    raise q.exception()  # type: ignore[misc]
            time.sleep(0.2)
    finally:
        up_query.stop()
        down.stop()
    if received[0] != produced[0]:
        raise AssertionError(f"{name}: query 2 received {received[0]} records, {produced[0]} were produced")
    measured_from = started_ms + warmup * 1000  # records sent in the warm-up are not measured
    lat = [(ms / 1000, n) for t, ms, n in sent_at if t >= measured_from]
    if not lat:
        raise AssertionError(f"{name}: no record sent after the {warmup:g} s warm-up reached query 2")
    row = {
        "variant": name,
        "records_measured": sum(n for _, n in lat),
        "records_produced": produced[0],
        "rate_achieved": round(achieved),
        "p50_s": _percentile(lat, 0.5),
        "p99_s": _percentile(lat, 0.99),
        "max_s": max(v for v, _ in lat),
    }
    print(
        f"  {name}: p50 {row['p50_s']:.2f} s, p99 {row['p99_s']:.2f} s, max {row['max_s']:.2f} s over "
        f"{row['records_measured']:,} records ({produced[0]:,} produced at {achieved:,.0f}/s, all received)",
        flush=True,
    )
    kafka.delete_stream(spark, servers, source)
    kafka.delete_stream(spark, servers, mid)
    return row


def _epoch_ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _batch_end_ms(p: Any) -> int:
    return _epoch_ms(p.timestamp) + int(p.durationMs.get("triggerExecution", 0))


def watermark_latency(
    spark: SparkSession, servers: str, workdir: str, partitions: int, trigger_s: float, seconds: float, rate: int
) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    warmup = max(3 * trigger_s, 5.0)
    print(
        f"pipeline watermark latency: live producer at {rate:,} records/s, {partitions} partitions, both queries "
        f"on a {trigger_s:g} s processing-time trigger, query 1 withWatermark(timestamp, 0 s), "
        f"{seconds:g} s measured after {warmup:g} s warm-up",
        flush=True,
    )
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
        .options(**options.intermediate(mid))
        .load()
        .writeStream.foreachBatch(each)
        .option("checkpointLocation", f"{workdir}/live-down")
        .trigger(**trigger)
        .start()
    )
    up = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [source], starting_offsets="earliest"))
        .load()
        .withWatermark("timestamp", "0 seconds")
        .select("key", "value")
        .writeStream.format("streamctl")
        # At least once, as in the figures recorded before transactions became an intermediate
        # stream's default; the transactions' own latency is the end-to-end benchmark's.
        .options(**options.sink(servers, mid, intermediate=True, transactional=False))
        .option("checkpointLocation", f"{workdir}/live-up")
        .trigger(**trigger)
        .start()
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
    reported = [
        (_batch_end_ms(p), int(p.sources[0].metrics["watermark"]))
        for p in downs
        if p.sources and "watermark" in (p.sources[0].metrics or {})
    ]

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
        rows.append(
            (
                label,
                str(len(lat)),
                f"{med:.2f}",
                f"{worst:.2f}",
                f"{med / trigger_s:.2f}",
                f"{worst / trigger_s:.2f}",
                str(missing),
            )
        )
        print(f"  {label}: median {med:.2f} s, max {worst:.2f} s over {len(lat)} advances", flush=True)
    return rows, ("watermark seen at", "advances", "median s", "max s", "median triggers", "max triggers", "never seen")
