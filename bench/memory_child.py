"""Child process of bench.memory: one source, one batch, peak heap from the JVM's memory pools."""

from __future__ import annotations

import json
import sys
import threading
import time

from pyspark.sql import SparkSession

import streamctl
from bench.common import run_available_now, spark_kafka_jars
from streamctl import options
from streamctl._jvm import jvm


def main() -> None:
    source, servers, topic, workdir, heap = sys.argv[1:6]
    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", heap)
        .config("spark.jars", ",".join(str(j) for j in spark_kafka_jars()))
    )
    spark = streamctl.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if source == "streamctl":
        opts = options.source(servers, [topic], starting_offsets="earliest")
        df = spark.readStream.format("streamctl").options(**opts).load()
    else:
        df = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", servers)
              .option("subscribe", topic).option("startingOffsets", "earliest").load())
    memory = jvm(spark).java.lang.management.ManagementFactory.getMemoryMXBean()
    peak = [0]
    running = threading.Event()
    running.set()

    def sample() -> None:
        # Heap in use (live data and garbage not yet collected), every 50 ms while the batch runs.
        while running.is_set():
            peak[0] = max(peak[0], memory.getHeapMemoryUsage().getUsed())
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    counted: list[int] = []
    started = time.perf_counter()
    sampler.start()
    run_available_now(df, f"{workdir}/memory-{source}", lambda b, _i: counted.append(b.count()))
    seconds = time.perf_counter() - started
    running.clear()
    sampler.join()
    print(json.dumps({"peak_heap_mb": peak[0] / 1e6, "seconds": seconds, "rows": sum(counted)}))
    spark.stop()


if __name__ == "__main__":
    main()
