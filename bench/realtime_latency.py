"""Real-time latency: a two-query pipeline at a fixed input rate, end to end from produce to the
downstream sink (p50/p99), for streamctl in real-time mode, Spark's Kafka connector in real-time
mode and both in micro-batch mode; and, for streamctl, the time an upstream watermark takes to
reach the downstream query's rows.

Every variant runs the same shape: input topic -> query 1 -> middle topic -> query 2 -> output
topic, one partition each, both queries in one local[2] session (real-time mode holds one slot per
input partition for the whole batch), default producer settings on both sinks. The input is written
by `streamctl.bench.RateProducer` (its own JVM; for streamctl framed, as an upstream streamctl
query writes it) with each record's send time in its key, which both queries pass on; a record's
latency is its output record's Kafka timestamp (set when query 2's sink sent it) minus that.
Watermarks (streamctl only) are the producer's clock, sent every 100 ms to the input; query 2
writes each row's watermark as its value, so a watermark's crossing time is when the first output
row carrying it was sent minus its value. Query 2's sink is plain (what a user's consumer reads),
query 1's intermediate (it carries the watermarks on).

A p99 is set by the batch boundaries in the window (no task reads while Spark ends, checkpoints and
starts a batch), so each run's window holds two boundaries of each query (10 s batches, 20 s
measured) and every variant runs --reps times, the order reversed every round; the table gives the
median run (by p99) and the p99's range. "boundary ms" is the median, over both queries' batches
after the first, of Spark's own `triggerExecution` duration minus the batch duration (real-time)
or of the whole `triggerExecution` (micro-batch): what one batch costs beyond reading.

    ./build.sh bench --only realtime
    .venv/bin/python bench/realtime_latency.py --rate 1000 --seconds 20
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_session, run_available_now, run_jvm_main, table
from streamctl import options
from streamctl_testing import kafka, kafka_broker

REAL_TIME_CONFS = {
    # Spark admits only its own sinks in real-time mode unless this check is off (docs/real-time.md).
    "spark.sql.streaming.realTimeMode.allowlistCheck": "false",
}
WATERMARK_EVERY_MS = 100
HEADER = (
    "pipeline",
    "measured/expected",
    "p50 ms",
    "p99 ms (min-max)",
    "watermark p50 ms",
    "watermark p99 ms",
    "boundary ms",
)
# The second streamctl variant sends the watermark on more often than the sink's default: the
# crossing time is about half the interval plus the path, so it shows the path's own cost.
FAST_WATERMARK = "watermark.interval 20ms"
# Spark checkpoints a real-time batch in the background only for its own sinks; any other sink,
# streamctl's included, needs asyncProgressTrackingEnabled=false, which makes every batch boundary
# wait for the offset and commit logs. The matched built-in variant runs with the same setting.
SYNC_PROGRESS = "asyncProgressTrackingEnabled=false"
VARIANTS = (
    "streamctl real-time",
    f"streamctl real-time ({FAST_WATERMARK})",
    "kafka real-time",
    f"kafka real-time ({SYNC_PROGRESS})",
    "streamctl micro-batch",
    "kafka micro-batch",
)


def _trigger(variant: str, batch: str) -> dict[str, object]:
    return {"realTime": batch} if "real-time" in variant else {"processingTime": "0 seconds"}


def _streamctl_query(
    spark: SparkSession,
    servers: str,
    src: str,
    dst: str,
    checkpoint: str,
    variant: str,
    batch: str,
    *,
    watermark_interval: str | None,
    last: bool,
):
    rows = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [src], starting_offsets="latest"))
        .options(**options.intermediate(src))
        .load()
    )
    # The last query writes each row's watermark, for its crossing time, to a plain topic; the
    # first one writes an intermediate stream, which carries the watermarks on.
    value = F.coalesce(F.unix_millis("watermark").cast("string"), F.lit("-")) if last else F.col("value")
    sink = (
        options.sink(servers, dst)
        if last
        # At least once in every variant: real-time mode has no transactional sink, and the
        # micro-batch variants it is compared with must write alike.
        else options.sink(servers, dst, intermediate=True, transactional=False, watermark_interval=watermark_interval)
    )
    writer = (
        rows.select("key", value.alias("value"))
        .writeStream.format("streamctl")
        .options(**sink)
        .option("checkpointLocation", checkpoint)
        .trigger(**_trigger(variant, batch))  # type: ignore[arg-type]
    )
    if "real-time" in variant:
        writer = writer.outputMode("update").option("asyncProgressTrackingEnabled", "false")
    return writer.start()


def _kafka_query(spark: SparkSession, servers: str, src: str, dst: str, checkpoint: str, variant: str, batch: str):
    rows = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", src)
        .option("startingOffsets", "latest")
        .load()
    )
    writer = (
        rows.select("key", "value")
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("topic", dst)
        .option("checkpointLocation", checkpoint)
        .trigger(**_trigger(variant, batch))  # type: ignore[arg-type]
    )
    if "real-time" in variant:
        writer = writer.outputMode("update")
    if SYNC_PROGRESS in variant:
        writer = writer.option("asyncProgressTrackingEnabled", "false")
    return writer.start()


def _output(
    spark: SparkSession, servers: str, stream: str, checkpoint: str, intermediate: bool = False
) -> list[tuple[int, str, str]]:
    """(Kafka timestamp ms, key, value) of every record of the (plain) output topic."""
    df = spark.readStream.format("streamctl").options(**options.source(servers, [stream], starting_offsets="earliest"))
    if intermediate:
        df = df.options(**options.intermediate(stream))
    rows: list[tuple[int, str, str]] = []

    def each(batch: DataFrame, _id: int) -> None:
        rows.extend(
            (r.ts, r.key, r.value)
            for r in batch.select(
                F.unix_millis("timestamp").alias("ts"),
                F.col("key").cast("string").alias("key"),
                F.col("value").cast("string").alias("value"),
            ).collect()
        )

    run_available_now(df.load(), checkpoint, each)
    return rows


def _drain(spark: SparkSession, servers: str, out: str, produced: int, stalled_s: float = 30.0) -> None:
    """Waits until every produced record reached the (plain) output topic, or it stopped growing for
    ``stalled_s``: a backlog still crossing the pipeline (say, over a batch boundary) counts in the
    figures rather than being cut off by stopping the queries."""
    last, since = -1, time.monotonic()
    while True:
        now = kafka.upcoming_offsets(spark, servers, out).get(0, 0)
        if now >= produced:
            return
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= stalled_s:
            return
        time.sleep(0.5)


def _percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def batch_seconds(batch: str) -> str:
    """``--batch``: a real-time batch duration in seconds (``10 seconds``), the form the boundary
    column subtracts; any other unit is refused rather than misread."""
    number, _, unit = batch.strip().partition(" ")
    if unit.strip() not in ("second", "seconds") or not number.replace(".", "", 1).isdigit():
        raise argparse.ArgumentTypeError(f"--batch takes '<n> seconds', not {batch!r}")
    return batch


def _boundary_ms(queries: tuple[StreamingQuery, ...], variant: str, batch: str) -> float | None:
    """The median over the queries' batches after the first of Spark's triggerExecution duration,
    less the batch duration in real-time mode: what a batch boundary costs."""
    reading_ms = float(batch_seconds(batch).split()[0]) * 1000 if "real-time" in variant else 0
    spent = [
        p.durationMs["triggerExecution"] - reading_ms
        for q in queries
        for p in q.recentProgress[1:]
        if "triggerExecution" in p.durationMs
    ]
    return statistics.median(spent) if spent else None


def run_variant(
    spark: SparkSession,
    servers: str,
    workdir: str,
    variant: str,
    rate: int,
    seconds: float,
    warmup: float,
    batch: str,
    watermark_interval: str | None,
    tag: str = "",
    hops: bool = False,
) -> dict[str, object]:
    if FAST_WATERMARK in variant:
        watermark_interval = FAST_WATERMARK.split()[-1]
    tag = re.sub(r"[^A-Za-z0-9]+", "-", variant) + tag
    src, mid, out = (f"bench-rt-{tag}-{n}" for n in ("in", "mid", "out"))
    for s in (src, mid, out):
        kafka.create_stream(spark, servers, s, 1)
    streamctl = variant.startswith("streamctl")
    if streamctl:
        down = _streamctl_query(
            spark,
            servers,
            mid,
            out,
            f"{workdir}/{tag}-2",
            variant,
            batch,
            watermark_interval=watermark_interval,
            last=True,
        )
        up = _streamctl_query(
            spark,
            servers,
            src,
            mid,
            f"{workdir}/{tag}-1",
            variant,
            batch,
            watermark_interval=watermark_interval,
            last=False,
        )
    else:
        down = _kafka_query(spark, servers, mid, out, f"{workdir}/{tag}-2", variant, batch)
        up = _kafka_query(spark, servers, src, mid, f"{workdir}/{tag}-1", variant, batch)
    try:
        time.sleep(8)  # both queries start reading (latest offsets) before the first record
        framing = ["--framed", "--watermark-every-ms", str(WATERMARK_EVERY_MS)] if streamctl else []
        produced = run_jvm_main(
            "RateProducer",
            servers,
            src,
            "1",
            str(rate),
            str(warmup + seconds),
            "10",
            *framing,
            "--tick-ms",
            "1",
            "--linger-ms",
            "0",
        )
        started_ms = int(produced.split("started_ms=")[1].split()[0])
        _drain(spark, servers, out, int(produced.split("records=")[1].split()[0]))
        for q in (up, down):
            if q.exception() is not None:
                raise RuntimeError(f"{variant}: {q.exception()}")
        boundary = _boundary_ms((up, down), variant, batch)
    finally:
        up.stop()
        down.stop()
    records = _output(spark, servers, out, f"{workdir}/{tag}-read")
    if hops:  # where the time goes: each record's Kafka timestamps in the input, middle and output topics
        src_ts = {k: t for t, k, _ in _output(spark, servers, src, f"{workdir}/{tag}-src", streamctl)}
        mid_ts = {k: t for t, k, _ in _output(spark, servers, mid, f"{workdir}/{tag}-mid", streamctl)}
        hop1 = [mid_ts[k] - src_ts[k] for k in mid_ts if k in src_ts]
        hop2 = [t - mid_ts[k] for t, k, _ in records if k in mid_ts]
        print(
            f"  hops {variant}: src->mid p50 {_percentile(hop1, 0.5)} p90 {_percentile(hop1, 0.9)} "
            f"p99 {_percentile(hop1, 0.99)}; mid->out p50 {_percentile(hop2, 0.5)} p90 {_percentile(hop2, 0.9)} "
            f"p99 {_percentile(hop2, 0.99)}",
            flush=True,
        )
    measure_from = started_ms + int(warmup * 1000)
    latencies, crossed = [], {}
    for ts, key, wm in records:
        sent = int(key.partition(":")[0])
        if measure_from <= sent < measure_from + seconds * 1000:
            latencies.append(ts - sent)
        if streamctl and wm.isdigit() and measure_from <= int(wm) < measure_from + seconds * 1000:
            crossed[int(wm)] = min(crossed.get(int(wm), ts), ts)
    crossing = [t - w for w, t in crossed.items()]
    run = {
        "measured": len(latencies),
        "expected": int(rate * seconds),
        "p50_ms": _percentile(latencies, 0.5) if latencies else None,
        "p99_ms": _percentile(latencies, 0.99) if latencies else None,
        "watermark_p50_ms": _percentile(crossing, 0.5) if crossing else None,
        "watermark_p99_ms": _percentile(crossing, 0.99) if crossing else None,
        "boundary_ms": boundary,
    }
    print(f"  {variant}: " + ", ".join(f"{k} {v}" for k, v in run.items()), flush=True)
    return run


def _ms(value: object) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _row(variant: str, runs: list[dict[str, object]]) -> tuple[str, ...]:
    """The variant's median run by p99, with the p99's range over the runs."""
    measured = sorted((r for r in runs if r["p99_ms"] is not None), key=lambda r: r["p99_ms"])
    if not measured:
        return (variant, "no records measured", "-", "-", "-", "-", "-")
    median = measured[len(measured) // 2]
    return (
        variant,
        f"{median['measured']:,}/{median['expected']:,}",
        _ms(median["p50_ms"]),
        f"{_ms(median['p99_ms'])} ({_ms(measured[0]['p99_ms'])}-{_ms(measured[-1]['p99_ms'])})",
        _ms(median["watermark_p50_ms"]),
        _ms(median["watermark_p99_ms"]),
        _ms(median["boundary_ms"]),
    )


def run(
    spark: SparkSession,
    servers: str,
    workdir: str,
    rate: int,
    seconds: float,
    warmup: float,
    batch: str,
    watermark_interval: str | None,
    variants: tuple[str, ...] = VARIANTS,
    hops: bool = False,
    reps: int = 3,
) -> tuple[list[tuple[str, ...]], tuple[str, ...], dict[str, object]]:
    """Runs every variant ``reps`` times (alternating order); returns its table rows, their header
    and the run's configuration (with every run's figures)."""
    for k, v in REAL_TIME_CONFS.items():
        spark.conf.set(k, v)
    print(
        f"real-time latency: {rate:,} records/s for {seconds:g} s after {warmup:g} s warm-up, 1 partition, "
        f"real-time batches of {batch}, streamctl watermark.interval {watermark_interval or 'its default'}, "
        f"input watermark every {WATERMARK_EVERY_MS} ms, {reps} runs of each variant",
        flush=True,
    )
    # One unmeasured short run first: the JIT and Spark's first jobs would otherwise land on
    # whichever variant runs first.
    try:
        run_variant(spark, servers, workdir, variants[0], rate, 5.0, 5.0, batch, watermark_interval, tag="warm-up")
    except Exception as e:  # noqa: BLE001 - the measured runs report it
        print(f"  warm-up run failed: {e}", flush=True)
    runs: dict[str, list[dict[str, object]]] = {v: [] for v in variants}
    failures: dict[str, str] = {}
    for rep in range(reps):
        for variant in variants if rep % 2 == 0 else tuple(reversed(variants)):
            if variant in failures:
                continue
            try:
                runs[variant].append(
                    run_variant(
                        spark,
                        servers,
                        workdir,
                        variant,
                        rate,
                        seconds,
                        warmup,
                        batch,
                        watermark_interval,
                        tag=f"-{rep}",
                        hops=hops,
                    )
                )
            # A variant that cannot run (say, Spark's Kafka connector on a Spark it was not built for) is
            # reported with its error, and the others still run.
            except Exception as e:  # noqa: BLE001
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                failures[variant] = "failed: " + first[:100]
                print(f"  {variant}: FAILED: {e}", flush=True)
    rows = [(v, failures[v], "-", "-", "-", "-", "-") if v in failures else _row(v, runs[v]) for v in variants]
    config = {
        "rate_records_per_s": rate,
        "measured_s": seconds,
        "warm_up_s": warmup,
        "partitions": 1,
        "real_time_batch": batch,
        "watermark_interval": watermark_interval or "not set (the sink's default)",
        "input_watermark_every_ms": WATERMARK_EVERY_MS,
        "variants": list(variants),
        "reps": reps,
        "runs": runs,
    }
    return rows, HEADER, config


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rate", type=int, default=1000, help="records/s written to the pipeline's input")
    p.add_argument("--seconds", type=float, default=20.0, help="measured part of each run")
    p.add_argument("--warmup", type=float, default=10.0, help="seconds of input not measured (JIT, first batch)")
    p.add_argument(
        "--batch",
        type=batch_seconds,
        default="10 seconds",
        help="real-time batch duration (the checkpoint interval), in seconds: '10 seconds'",
    )
    p.add_argument("--reps", type=int, default=3, help="runs of each variant, in alternating order")
    p.add_argument("--watermark-interval", help="sink option watermark.interval (default: not set, the sink's default)")
    p.add_argument("--hops", action="store_true", help="also print each query's share of the latency (diagnostic)")
    p.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, from: " + ", ".join(VARIANTS))
    return p


def standalone(argv: list[str] | None = None) -> tuple[list[tuple[str, ...]], tuple[str, ...], dict[str, object]]:
    """Runs the benchmark with its own broker and session (bench/run.py's group 'realtime'); returns
    what :func:`run` returns."""
    args = parser().parse_args(argv if argv is not None else [])
    variants = tuple(v.strip() for v in args.variants.split(",") if v.strip())
    with tempfile.TemporaryDirectory(prefix="streamctl-bench-rt-") as tmp, kafka_broker() as broker:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        spark = bench_session()
        try:
            return run(
                spark,
                broker.bootstrap_servers,
                tmp,
                args.rate,
                args.seconds,
                args.warmup,
                args.batch,
                args.watermark_interval,
                variants,
                args.hops,
                args.reps,
            )
        finally:
            spark.stop()


def main() -> int:
    rows, header, _ = standalone(sys.argv[1:])
    print("\n" + table(rows, header))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
