"""Read throughput: streamctl against Spark's built-in Kafka source on the same topic, same run.

N records of V bytes over P partitions, read with Trigger.AvailableNow and count() in
foreachBatch, each variant R times, the order reversed every repetition; the ratio is
built-in time over the variant's time (above 1.0 means faster than the built-in source).
Variants: streamctl with the default (round-robin) chooser, time-aligned, and the topic
read as a bootstrap stream.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from bench.common import Measurement, timed
from streamctl import kafka, options

BUILTIN = "built-in"


def _count(df: DataFrame, checkpoint: str) -> int:
    counted: list[int] = []
    q = (
        df.writeStream.foreachBatch(lambda batch, _id: counted.append(batch.count()))
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    if q.exception() is not None:
        raise q.exception()  # type: ignore[misc]
    return sum(counted)


def run(spark: SparkSession, servers: str, workdir: str, records: int, partitions: int, value_size: int,
        reps: int) -> list[Measurement]:
    topic = f"bench-read-{records}"
    print(f"read throughput: {records:,} records of {value_size} bytes over {partitions} partitions, "
          f"{reps} repetitions per variant in alternating order, Trigger.AvailableNow + count()", flush=True)
    kafka.create_stream(spark, servers, topic, partitions)
    kafka.produce_synthetic(spark, servers, topic, records, value_size)

    source = options.source(servers, [topic], starting_offsets="earliest")
    variants = {
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
    results = {name: Measurement("read", name, records) for name in variants}
    names = list(variants)
    run_id = 0
    for rep in range(reps):
        for name in names if rep % 2 == 0 else reversed(names):
            run_id += 1
            checkpoint = f"{workdir}/read-{run_id}"
            seen: list[int] = []
            seconds = timed(lambda: seen.append(_count(variants[name](), checkpoint)))  # noqa: B023
            if seen[0] != records:
                raise AssertionError(f"{name} read {seen[0]} records, expected {records}")
            results[name].seconds.append(seconds)
            print(f"  {name}: {seconds:.2f} s", flush=True)
    return list(results.values())
