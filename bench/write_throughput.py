"""Write throughput: streamctl's sink (intermediate framing) against Spark's built-in Kafka sink.

The same cached DataFrame of N (key, value) rows is written by each sink to a fresh topic each
time, at both settings of bench.common.SETTINGS: "defaults" (the defaults of the session's one
kafka-clients, 3.9.2: linger.ms=0 on both) and "tuned" (the same linger.ms, batch.size,
compression.type and acks on both). One warm-up run each, then R in
alternating order; every run's topic must hold exactly N records. Batch writes use the same
DataWriter as streaming writes, without trigger overhead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from bench.common import SETTINGS, Measurement, alternate, describe, kafka_options, timed
from streamctl import options
from streamctl_testing import kafka

STREAMCTL, BUILTIN = "streamctl", "built-in"


def run(
    spark: SparkSession, servers: str, records: int, partitions: int, value_size: int, reps: int
) -> tuple[list[Measurement], dict[str, Any]]:
    config = {
        "rows": records,
        "value_bytes": value_size,
        "partitions": partitions,
        "keyed": True,
        "write": "batch write of a cached DataFrame",
        "warm_up_runs": 1,
        "repetitions": reps,
        "order": "alternating (reversed every round)",
        "settings": {name: describe(s["producer"]) for name, s in SETTINGS.items()},
    }
    print(
        f"write throughput: {records:,} rows, {value_size}-byte values, keyed, into {partitions} partitions, "
        f"one warm-up then {reps} repetitions per variant in alternating order (batch write of a cached "
        "DataFrame); written counts checked",
        flush=True,
    )
    for name, s in SETTINGS.items():
        print(f"  settings '{name}': {describe(s['producer'])}", flush=True)
    df = rows(spark, records, partitions, value_size)
    sinks = {
        f"{source}, {settings}": (sink, settings)
        for settings in SETTINGS
        for source, sink in ((STREAMCTL, write_streamctl), (BUILTIN, write_builtin))
    }
    results = {
        name: Measurement("write", name, records, {"producer": describe(SETTINGS[s]["producer"])})
        for name, (_, s) in sinks.items()
    }
    run_id = [0]

    def one(name: str, _warm_up: bool) -> float:
        run_id[0] += 1
        sink, settings = sinks[name]
        return write_once(
            spark,
            servers,
            f"bench-write-{run_id[0]}",
            partitions,
            records,
            lambda topic: sink(df, servers, topic, SETTINGS[settings]["producer"]),
        )

    alternate(list(sinks), reps, one, results)
    df.unpersist()
    return list(results.values()), config


def rows(spark: SparkSession, records: int, partitions: int, value_size: int) -> DataFrame:
    """The cached input: ``records`` rows of a string key (the row number) and a ``value_size``-byte string value."""
    df = (
        spark.range(records, numPartitions=partitions)
        .select(F.col("id").cast("string").alias("key"), F.lit("x" * value_size).alias("value"))
        .cache()
    )
    df.count()
    return df


def write_streamctl(df: DataFrame, servers: str, topic: str, producer: Mapping[str, str]) -> None:
    # At least once, as Spark's sink it is compared with (the transactional sink: the pipeline group).
    opts = options.sink(servers, topic, intermediate=True, transactional=False, kafka=producer)
    df.write.format("streamctl").options(**opts).mode("append").save()


def write_builtin(df: DataFrame, servers: str, topic: str, producer: Mapping[str, str]) -> None:
    (
        df.write.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("topic", topic)
        .options(**kafka_options(producer))
        .save()
    )


def write_once(
    spark: SparkSession, servers: str, topic: str, partitions: int, records: int, write: Callable[[str], None]
) -> float:
    """Seconds ``write`` takes to write the rows to a fresh stream ``topic``, which must then hold
    exactly ``records`` records; the stream is deleted after."""
    kafka.create_stream(spark, servers, topic, partitions)
    seconds = timed(lambda: write(topic))
    written = sum(kafka.upcoming_offsets(spark, servers, topic).values())
    if written != records:
        raise AssertionError(f"writing to {topic} wrote {written} records, expected {records}")
    kafka.delete_stream(spark, servers, topic)
    return seconds
