"""Read throughput: streamctl against Spark's built-in Kafka source on the same topic, same run.

N records of V bytes over P partitions, read with Trigger.AvailableNow and count() in
foreachBatch, each variant R times, the order reversed every repetition; the ratio is
built-in time over the variant's time (above 1.0 means faster than the built-in source).
Variants: streamctl with the default (round-robin) chooser, time-aligned, and the topic
read as a bootstrap stream. The ceiling is a bare KafkaConsumer poll loop in a JVM of its
own (bench/jvm RawConsumerBench) with a thread per Spark core, timed after a warm-up pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession

from bench.common import Measurement, run_available_now, run_jvm_main, timed
from streamctl import options
from streamctl_testing import kafka

BUILTIN = "built-in"
CEILING = "raw KafkaConsumer"


def count_available_now(df: DataFrame, checkpoint: str) -> int:
    """Runs `df` to the end of its input with Trigger.AvailableNow; returns the rows counted."""
    counted: list[int] = []
    run_available_now(df, checkpoint, lambda batch, _id: counted.append(batch.count()))
    return sum(counted)


def raw_consumer(servers: str, topic: str, records: int, threads: int) -> tuple[int, float]:
    out = run_jvm_main("RawConsumerBench", servers, topic, str(records), str(threads))
    found = re.search(r"RESULT records=(\d+) seconds=([\d.]+)", out)
    if found is None:
        raise AssertionError(f"RawConsumerBench printed no result:\n{out}")
    return int(found.group(1)), float(found.group(2))


def run(spark: SparkSession, servers: str, workdir: str, records: int, partitions: int, value_size: int,
        reps: int) -> list[Measurement]:
    topic = f"bench-read-{records}"
    cores = spark.sparkContext.defaultParallelism
    print(f"read throughput: {records:,} records of {value_size} bytes over {partitions} partitions, "
          f"{reps} repetitions per variant in alternating order, Trigger.AvailableNow + count(); "
          f"ceiling: KafkaConsumer loop on {cores} threads (= Spark cores), default consumer settings", flush=True)
    kafka.create_stream(spark, servers, topic, partitions)
    kafka.produce_synthetic(spark, servers, topic, records, value_size)

    source = options.source(servers, [topic], starting_offsets="earliest")
    frames: dict[str, Callable[[], DataFrame]] = {
        "streamctl": lambda: spark.readStream.format("streamctl").options(**source).load(),
        "streamctl time-aligned": lambda: spark.readStream.format("streamctl")
        .options(**source)
        .options(**options.time_aligned())
        .load(),
        "streamctl bootstrap": lambda: spark.readStream.format("streamctl")
        .options(**source)
        .options(**options.bootstrap(topic))
        .load(),
        BUILTIN: lambda: spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load(),
    }

    def spark_variant(name: str, checkpoint: str) -> tuple[int, float]:
        seen: list[int] = []
        seconds = timed(lambda: seen.append(count_available_now(frames[name](), checkpoint)))
        return seen[0], seconds

    names = [*frames, CEILING]
    results = {name: Measurement("read", name, records) for name in names}
    run_id = 0
    for rep in range(reps):
        for name in names if rep % 2 == 0 else reversed(names):
            run_id += 1
            if name == CEILING:
                seen, seconds = raw_consumer(servers, topic, records, cores)
            else:
                seen, seconds = spark_variant(name, f"{workdir}/read-{run_id}")
            if seen != records:
                raise AssertionError(f"{name} read {seen} records, expected {records}")
            results[name].seconds.append(seconds)
            print(f"  {name}: {seconds:.2f} s", flush=True)
    return list(results.values())
