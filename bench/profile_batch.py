"""Where a small steady-state micro-batch spends its time: one topic of 8 partitions, read 16 records
a batch (about 200 batches) by each source with the noop sink, printing the median of every
durationMs phase; streamctl's run is profiled (async-profiler, wall clock, every thread) into
target/profile-batch/streamctl-wall.txt (collapsed stacks).

    .venv/bin/python bench/profile_batch.py     # Linux x64 only

Not part of ./build.sh bench: a profile guides work, its figures are no benchmark result.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT
from bench.profiling import profile, profiled_session
from streamctl_testing import kafka

PHASES = ("latestOffset", "queryPlanning", "walCommit", "addBatch", "commitOffsets", "triggerExecution")


def main() -> None:
    out = ROOT / "target" / "profile-batch"
    with profiled_session(out) as (broker, spark, profiler), tempfile.TemporaryDirectory() as tmp:
        servers = broker.bootstrap_servers
        kafka.create_stream(spark, servers, "profile-batch", 8)
        kafka.produce_synthetic(spark, servers, "profile-batch", 8 * 400, 100)

        def run(name: str, fmt: str) -> float:
            q = (
                spark.readStream.format(fmt)
                .option("kafka.bootstrap.servers", servers)
                .option("subscribe", "profile-batch")
                .option("startingOffsets", "earliest")
                .option("maxOffsetsPerTrigger", 16)
                .load()
                .writeStream.format("noop")
                .option("checkpointLocation", f"{tmp}/{name}")
                .trigger(availableNow=True)
                .start()
            )
            q.awaitTermination()
            batches = [p for p in q.recentProgress if p["numInputRows"] > 0][1:]
            print(name, {k: statistics.median(p["durationMs"].get(k, 0) for p in batches) for k in PHASES}, flush=True)
            return 0.0

        run("streamctl (warm-up)", "streamctl")
        profile(profiler, out / "streamctl-wall.txt", 1, lambda: run("streamctl", "streamctl"), event="wall")
        run("built-in", "kafka")


if __name__ == "__main__":
    main()
