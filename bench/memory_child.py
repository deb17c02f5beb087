"""Child process of bench.memory: one source, one batch over the whole backlog, the JVM's heap
sampled while it runs: in use (live data and garbage) and live (in use right after a forced
full GC)."""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time

from pyspark.sql import SparkSession

import streamctl
from bench.common import BUILTIN_POOLED_GROUP, kafka_options, run_available_now
from streamctl import options
from streamctl_testing._jvm import jvm
from streamctl_testing.spark_kafka import spark_kafka_jars

GC_EVERY_S = 1.0


def main() -> None:
    source, servers, topic, workdir, heap, consumer_json = sys.argv[1:7]
    consumer = json.loads(consumer_json)
    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", heap)
        .config("spark.jars", ",".join(str(j) for j in spark_kafka_jars()))
    )
    spark = streamctl.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if source == "streamctl":
        opts = options.source(servers, [topic], starting_offsets="earliest", kafka=consumer)
        df = spark.readStream.format("streamctl").options(**opts).load()
    else:
        df = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", servers)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("kafka.group.id", BUILTIN_POOLED_GROUP)
            .options(**kafka_options(consumer))
            .load()
        )
    j = jvm(spark)
    memory = j.java.lang.management.ManagementFactory.getMemoryMXBean()
    in_use: list[int] = []
    live: list[int] = []
    running = threading.Event()
    running.set()

    def sample() -> None:
        # In local mode the driver JVM is the executor: the readers' memory is this heap.
        next_gc = time.monotonic() + GC_EVERY_S
        while running.is_set():
            in_use.append(memory.getHeapMemoryUsage().getUsed())
            if time.monotonic() >= next_gc:
                memory.gc()
                live.append(memory.getHeapMemoryUsage().getUsed())
                next_gc = time.monotonic() + GC_EVERY_S
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    counted: list[int] = []
    started = time.perf_counter()
    sampler.start()
    run_available_now(df, f"{workdir}/memory-{source}-{topic}", lambda b, _i: counted.append(b.count()))
    seconds = time.perf_counter() - started
    running.clear()
    sampler.join()
    print(
        json.dumps(
            {
                "live_heap_max_mb": max(live, default=0) / 1e6,
                "live_heap_median_mb": statistics.median(live or [0]) / 1e6,
                "live_samples": len(live),
                "in_use_peak_mb": max(in_use, default=0) / 1e6,
                "heap_max_mb": memory.getHeapMemoryUsage().getMax() / 1e6,
                "seconds": seconds,
                "rows": sum(counted),
                "batches": len(counted),
            }
        )
    )
    spark.stop()


if __name__ == "__main__":
    main()
