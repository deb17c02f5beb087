"""Demo step: a two-stage pipeline over bounded input that ends by itself.

Stage 1 repartitions clicks by user into an intermediate stream; stage 2 counts them per
30-second window on the upstream watermark. Stage 1 runs with ``Trigger.AvailableNow`` and,
once done, sends end-of-stream; stage 2 stops by itself when every partition has it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import streamctl
from streamctl import options
from streamctl_testing import kafka
from streamctl_testing.demos import say

if TYPE_CHECKING:
    from streamctl_testing.demo import DemoContext


def step_control_pipeline(ctx: DemoContext) -> None:
    """Two queries chained through Kafka: end-of-stream and the watermark flow from one to the next."""
    spark, servers = ctx.spark, ctx.servers
    kafka.create_stream(spark, servers, "clicks", 4)
    kafka.create_stream(spark, servers, "clicks-by-user", 2)
    n, start = 600, (int(time.time()) // 60 - 10) * 60_000  # ten minutes ago, on a minute
    kafka.produce(
        spark,
        servers,
        "clicks",
        [f"click-{i}".encode() for i in range(n)],
        keys=[f"user-{i % 12}".encode() for i in range(n)],
        partitions=[i % 4 for i in range(n)],
        timestamps=[start + i * 500 for i in range(n)],
    )
    say(f"Produced {n} clicks of 12 users over 5 minutes of event time into 4 partitions of 'clicks'.")

    # Stage 2 first, so it is waiting when stage 1 starts writing.
    windows: dict[int, int] = {}

    def upsert(batch, _batch_id) -> None:
        for r in batch.collect():
            windows[int(r.window.start.timestamp())] = r["count"]

    stage2 = (
        counts_per_window(spark, servers, "30 seconds")
        .writeStream.queryName("count_per_window")
        .outputMode("update")
        .foreachBatch(upsert)
        .option("checkpointLocation", ctx.checkpoint("count-per-window"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    stage1 = (
        clicks_by_user(spark, servers, "10 seconds", max_records_per_batch=150)
        .writeStream.format("streamctl")
        .queryName("clicks_by_user")
        .options(**options.sink(servers, "clicks-by-user", intermediate=True))
        .option("checkpointLocation", ctx.checkpoint("clicks-by-user"))
        .trigger(availableNow=True)
        .start()
    )
    began = time.monotonic()
    stage1.awaitTermination()
    batches = len([p for p in stage1.recentProgress if p["numInputRows"] > 0])
    say(
        f"Stage 1 repartitioned them by user into 'clicks-by-user' in {batches} batches (Trigger.AvailableNow), "
        "sending its watermark after each batch and end-of-stream to both partitions when it finished."
    )
    if not stage2.awaitTermination(300):
        stage2.stop()
        raise RuntimeError("stage 2 did not stop at end-of-stream")
    metrics = stage2.lastProgress["sources"][0]["metrics"]
    say(
        f"Stage 2 saw end-of-stream on every partition (endOfStream={metrics['endOfStream']}) and stopped by "
        f"itself {time.monotonic() - began:.1f} s after stage 1 started; no one called stop(). Clicks per window:"
    )
    for second, count in sorted(windows.items()):
        say(f"    {time.strftime('%H:%M:%S', time.gmtime(second))}  {count:3d}  {'#' * (count // 4)}")
    say(f"{sum(windows.values())} clicks in {len(windows)} windows: every click counted once.")


def clicks_by_user(spark: SparkSession, servers: str, delay: str, **source: Any) -> DataFrame:
    """Stage 1's rows: stream ``clicks`` from its start, with a watermark ``delay`` behind its
    event times, in two partitions by user (the key), each value its event time in milliseconds.
    ``source``: more :func:`streamctl.options.source` arguments."""
    return (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, ["clicks"], starting_offsets="earliest", **source))
        .load()
        .withWatermark("timestamp", delay)
        .repartition(2, "key")
        .select("key", F.unix_millis("timestamp").cast("string").alias("value"))
    )


def counts_per_window(spark: SparkSession, servers: str, window: str, **source: Any) -> DataFrame:
    """Stage 2's rows: intermediate stream ``clicks-by-user`` counted per ``window`` of event time
    on the upstream watermark (update mode)."""
    by_user = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, ["clicks-by-user"], starting_offsets="earliest", **source))
        .options(**options.intermediate("clicks-by-user"))
        .load()
        .select(F.timestamp_millis(F.col("value").cast("string").cast("long")).alias("ts"), "watermark")
    )
    return streamctl.with_upstream_watermark(by_user, "ts").groupBy(F.window("ts", window)).count()


__all__ = ["clicks_by_user", "counts_per_window", "step_control_pipeline"]
