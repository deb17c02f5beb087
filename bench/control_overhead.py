"""Control-message overhead on source throughput (issues #5, #12): the same framed data read from
three intermediate streams: one without control messages, one with a watermark on every partition
after each batch's worth of records, as an upstream query sending one watermark per batch would,
and one that also has idle messages on: the worst case of a producer going idle after every batch
(an active message on every partition before the round's records, a watermark and an idle message
after them).

All streams get N framed records of V bytes over P partitions, written in B rounds of N/B
records (one upstream batch each). Each stream is read with Trigger.AvailableNow and
count() plus max(watermark) in foreachBatch: once each to warm up (not counted), then R times
in alternating order. An overhead is a with-control median over the without-control median,
minus one.

Every variant reads one upstream batch per batch: maxOffsetsPerTrigger is N/B plus the control
messages one round wrote (0, P, 3P). Control messages occupy offsets and count against the
budget like records, as Spark's maxOffsetsPerTrigger counts offsets (docs/control-messages.md);
with N/B for all, the last control messages of a finite run spill into a B+1st batch of a few
hundred offsets, one batch's fixed cost (about 2% of a 50-batch run) that a continuing stream
spreads as P/(N/B) more batches (0.008% at the defaults). Each variant must run exactly B
batches and read all N records, so the comparison is of the same data in the same batches.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from bench.common import Measurement, run_available_now, timed
from streamctl import options
from streamctl_testing import control, kafka

PLAIN = "intermediate, no control"
WITH_CONTROL = "intermediate, 1 watermark/partition/batch"
WITH_IDLE = "intermediate, + idle and active/partition/batch"
WATERMARK_BASE_MS = 1_700_000_000_000


def _read(df: DataFrame, checkpoint: str) -> tuple[int, int | None, int]:
    """(rows, largest watermark on a row in epoch ms, batches) of one AvailableNow run."""
    rows: list[int] = []
    marks: list[int] = []

    def each(batch: DataFrame, _id: int) -> None:
        r = batch.agg(F.count("*").alias("n"), F.max(F.unix_millis("watermark")).alias("w")).first()
        rows.append(int(r["n"]))
        if r["w"] is not None:
            marks.append(int(r["w"]))

    run_available_now(df, checkpoint, each)
    return sum(rows), max(marks, default=None), len(rows)


def run(
    spark: SparkSession,
    servers: str,
    workdir: str,
    records: int,
    partitions: int,
    value_size: int,
    reps: int,
    batches: int,
) -> list[Measurement]:
    per_batch = records // batches
    records = per_batch * batches
    print(
        f"control overhead: {records:,} framed records of {value_size} bytes over {partitions} partitions in "
        f"{batches} batches of {per_batch:,} records plus that round's control messages (maxOffsetsPerTrigger); "
        "one stream without control messages, one with a watermark on every partition after each batch's "
        "records, one with idle messages on (worst case: active before, watermark and idle after each batch's "
        f"records, on every partition); {reps} repetitions per variant in alternating order after one warm-up "
        "each, Trigger.AvailableNow + count() and max(watermark)",
        flush=True,
    )
    streams = {
        PLAIN: f"bench-ctl-none-{records}",
        WITH_CONTROL: f"bench-ctl-wm-{records}",
        WITH_IDLE: f"bench-ctl-idle-{records}",
    }
    # The control messages one round writes on every partition: a batch reads one upstream batch.
    control_per_round = {PLAIN: 0, WITH_CONTROL: partitions, WITH_IDLE: 3 * partitions}
    for stream in streams.values():
        kafka.create_stream(spark, servers, stream, partitions)
    for b in range(batches):
        mark = WATERMARK_BASE_MS + b * 1000
        idle_stream = streams[WITH_IDLE]
        if b > 0:  # back before the round's records, with the watermark it went idle with
            control.send_idle_status(spark, servers, idle_stream, "bench", 1, idle=False, watermark_ms=mark - 1000)
        for stream in streams.values():
            control.produce_synthetic_framed(spark, servers, stream, per_batch, value_size)
        for stream in (streams[WITH_CONTROL], streams[WITH_IDLE]):
            control.send_watermark(spark, servers, stream, "bench", 1, mark)
        control.send_idle_status(spark, servers, idle_stream, "bench", 1, idle=True, watermark_ms=mark)

    results = {name: Measurement("control", name, records) for name in streams}
    names = list(streams)
    run_id = 0
    for rep in range(-1, reps):
        for name in names if rep % 2 == 0 else reversed(names):
            run_id += 1
            df = (
                spark.readStream.format("streamctl")
                .options(
                    **options.source(
                        servers,
                        [streams[name]],
                        starting_offsets="earliest",
                        max_records_per_batch=per_batch + control_per_round[name],
                    )
                )
                .options(**options.intermediate(streams[name]))
                .load()
            )
            seen: list[tuple[int, int | None, int]] = []
            seconds = timed(lambda: seen.append(_read(df, f"{workdir}/control-{run_id}")))  # noqa: B023
            rows, watermark, ran = seen[0]
            if rows != records:
                raise AssertionError(f"{name} read {rows} records, expected {records}")
            # Rows carry a watermark once the reader passed it: every one but the last (no row follows it).
            expected = None if name == PLAIN else WATERMARK_BASE_MS + (batches - 2) * 1000
            if watermark != expected:
                raise AssertionError(f"{name}: largest row watermark {watermark}, expected {expected}")
            if ran != batches:
                raise AssertionError(f"{name} ran {ran} batches, expected {batches}")
            if rep >= 0:
                results[name].seconds.append(seconds)
            print(f"  {name}: {seconds:.2f} s, {ran} batches{' (warm-up)' if rep < 0 else ''}", flush=True)
    base = results[PLAIN].median
    for name in (WITH_CONTROL, WITH_IDLE):
        print(
            f"  overhead of {name.removeprefix('intermediate, ')}: {100 * (results[name].median / base - 1):+.1f}% "
            "(target <= 5%)",
            flush=True,
        )
    return list(results.values())
