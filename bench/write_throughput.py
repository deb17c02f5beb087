"""Write throughput: streamctl's sink (intermediate framing) against Spark's built-in Kafka sink.

The same cached DataFrame of N (key, value) rows is written by each sink, R times in
alternating order, to a fresh topic each time; the ratio is built-in time over streamctl time.
Batch writes use the same DataWriter as streaming writes, without trigger overhead.
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from bench.common import Measurement, timed
from streamctl import options
from streamctl_testing import kafka

BUILTIN = "built-in"


def run(spark: SparkSession, servers: str, records: int, partitions: int, value_size: int,
        reps: int) -> list[Measurement]:
    print(f"write throughput: {records:,} rows, {value_size}-byte values, keyed, into {partitions} partitions, "
          f"{reps} repetitions per sink in alternating order (batch write of a cached DataFrame)", flush=True)
    df = (
        spark.range(records, numPartitions=partitions)
        .select(F.col("id").cast("string").alias("key"), F.lit("x" * value_size).alias("value"))
        .cache()
    )
    df.count()

    def streamctl_sink(topic: str) -> None:
        df.write.format("streamctl").options(**options.sink(servers, topic)).mode("append").save()

    def builtin_sink(topic: str) -> None:
        df.write.format("kafka").option("kafka.bootstrap.servers", servers).option("topic", topic).save()

    sinks = {"streamctl": streamctl_sink, BUILTIN: builtin_sink}
    results = {name: Measurement("write", name, records) for name in sinks}
    names = list(sinks)
    for rep in range(reps):
        for name in names if rep % 2 == 0 else reversed(names):
            topic = f"bench-write-{name.replace(' ', '-')}-{rep}"
            kafka.create_stream(spark, servers, topic, partitions)
            seconds = timed(lambda: sinks[name](topic))  # noqa: B023
            written = sum(kafka.upcoming_offsets(spark, servers, topic).values())
            if written != records:
                raise AssertionError(f"{name} wrote {written} records, expected {records}")
            results[name].seconds.append(seconds)
            print(f"  {name}: {seconds:.2f} s", flush=True)
    df.unpersist()
    return list(results.values())
