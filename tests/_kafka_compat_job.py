"""Runs the same jobs with format("kafka") (Spark's spark-sql-kafka-0-10, 4.2.0 from Maven Central,
fetched by bench/spark-kafka) and with format("streamctl") in one SparkSession, and writes every
job's rows, per format, to a JSON file for test_kafka_compat.py to compare. A process of its own:
the connector's jars stay out of the test session.

Usage: _kafka_compat_job.py SERVERS PREFIX WORKDIR OUT.json
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, Row, SparkSession

import streamctl_testing
from streamctl_testing import kafka

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import spark_kafka_jars

FORMATS = ("kafka", "streamctl")
SPARK_COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]


def _plain(v: object) -> object:
    if isinstance(v, (bytes, bytearray)):
        return "b64:" + base64.b64encode(bytes(v)).decode()
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if hasattr(v, "asDict"):
        return {k: _plain(x) for k, x in v.asDict().items()}
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def _rows(rows: list) -> list:
    return sorted((_plain(r.asDict()) for r in rows), key=lambda d: json.dumps(d, sort_keys=True))


def main(servers: str, prefix: str, work: str, out: str) -> None:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("streamctl-kafka-compat")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.jars", ",".join(str(j) for j in spark_kafka_jars()))
    )
    spark = streamctl_testing.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    src, other = f"{prefix}-src", f"{prefix}-other"
    kafka.create_stream(spark, servers, src, 3)
    kafka.create_stream(spark, servers, other, 1)
    n = 60
    kafka.produce(
        spark,
        servers,
        src,
        [f"v{i}".encode() for i in range(n)],
        keys=[f"k{i % 7}".encode() for i in range(n)],
        partitions=[i % 3 for i in range(n)],
        timestamps=[1_700_000_000_000 + i for i in range(n)],
    )
    kafka.produce_with_headers(spark, servers, src, b"with-headers", [("trace", b"t-1"), ("origin", b"eu")])
    kafka.produce(spark, servers, other, [b"o1", b"o2"])
    results: dict[str, dict[str, list]] = {}

    def read(fmt: str, **opts: str) -> DataFrame:
        return spark.read.format(fmt).option("kafka.bootstrap.servers", servers).options(**opts).load()

    def stream(fmt: str, **opts: str) -> DataFrame:
        return spark.readStream.format(fmt).option("kafka.bootstrap.servers", servers).options(**opts).load()

    def available_now(df: DataFrame, name: str) -> list:
        rows: list = []
        q = (
            df.writeStream.foreachBatch(lambda b, _i: rows.extend(b.collect()))
            .option("checkpointLocation", f"{work}/{name}")
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination()
        return rows

    for fmt in FORMATS:

        def case(name: str, rows: list, fmt: str = fmt) -> None:
            results.setdefault(name, {})[fmt] = _rows(rows)

        case(
            "streaming read, headers, maxOffsetsPerTrigger",
            available_now(
                stream(
                    fmt, subscribe=src, startingOffsets="earliest", includeHeaders="true", maxOffsetsPerTrigger="7"
                ).select(*SPARK_COLUMNS),
                f"read-{fmt}",
            ),
        )
        case(
            "streaming read, per-partition startingOffsets",
            available_now(
                stream(
                    fmt,
                    subscribe=f"{src},{other}",
                    startingOffsets=json.dumps({src: {"0": 5, "1": -2, "2": -1}, other: {"0": 1}}),
                ).select("topic", "partition", "offset", "value"),
                f"json-{fmt}",
            ),
        )
        case("batch read, default offsets", read(fmt, subscribe=src).select(*SPARK_COLUMNS[:7]).collect())
        case(
            "batch read, offsets JSON",
            read(
                fmt,
                subscribe=f"{src},{other}",
                startingOffsets=json.dumps({src: {"0": 3, "1": -2, "2": 10}, other: {"0": -2}}),
                endingOffsets=json.dumps({src: {"0": 9, "1": -1, "2": 12}, other: {"0": -1}}),
            )
            .select(*SPARK_COLUMNS[:7])
            .collect(),
        )
        case(
            "batch read, timestamps",
            read(
                fmt,
                subscribe=src,
                startingTimestamp="1700000000020",
                endingOffsetsByTimestamp=json.dumps(
                    {src: {"0": 1_700_000_000_040, "1": 1_700_000_000_050, "2": 1_800_000_000_000}}
                ),
            )
            .select("partition", "offset", "value")
            .collect(),
        )
        case(
            "batch read, subscribePattern and assign",
            # "oth" is only part of "other": as in Spark, a match inside a topic's name reads the topic.
            read(fmt, subscribePattern=f"{prefix}-(src|oth)").select("topic", "offset").collect()
            + read(fmt, assign=json.dumps({src: [1]}), includeHeaders="true").select(*SPARK_COLUMNS).collect(),
        )

        # Offsets JSON naming partitions other than those read: both connectors refuse the same ones.
        def refused(fmt: str = fmt, **opts: str) -> bool:
            try:
                read(fmt, subscribe=src, **opts).collect()
            # Spark's connector fails an assertion; streamctl names the partition (test_bad_input.py).
            except (Py4JJavaError, PySparkException):
                return True
            return False

        all_src = {"0": -2, "1": -2, "2": -2}
        offsets = {
            "exact": {src: all_src},
            "no such partition": {src: {**all_src, "3": -2}},
            "a stream not read": {src: all_src, other: {"0": -2}},
            "a partition left out": {src: {"0": -2, "1": -2}},
        }
        ending = json.dumps({src: {"0": 1, "1": 1, "2": 1}, other: {"0": 1}})
        case(
            "batch read, offsets JSON naming other partitions",
            [Row(json=k, refused=refused(startingOffsets=json.dumps(v))) for k, v in offsets.items()]
            + [Row(json="ending: a stream not read", refused=refused(endingOffsets=ending))],
        )

        # Writes: the same input through each sink, read back by Spark's own connector.
        written = f"{prefix}-stream-out-{fmt}"
        kafka.create_stream(spark, servers, written, 3)
        q = (
            stream(fmt, subscribe=src, startingOffsets="earliest", includeHeaders="true")
            .selectExpr("key", "CASE WHEN value = 'v3' THEN NULL ELSE value END AS value", "headers")
            .writeStream.format(fmt)
            .option("kafka.bootstrap.servers", servers)
            .option("topic", written)
            .option("checkpointLocation", f"{work}/write-{fmt}")
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination()
        case(
            "streaming write: tombstone, headers, keyed partitions",
            # A keyed record's partition is the key's murmur2 hash on both sides; an unkeyed one
            # goes wherever Kafka's sticky partitioner happens to be, on either side.
            read("kafka", subscribe=written, includeHeaders="true")
            .selectExpr("key", "value", "CASE WHEN key IS NULL THEN NULL ELSE partition END AS partition", "headers")
            .collect(),
        )
        saved = f"{prefix}-batch-out-{fmt}"
        kafka.create_stream(spark, servers, saved, 2)
        (
            spark.createDataFrame(
                [(saved, "a", "1", 0), (saved, "b", None, 1), (saved, None, "3", 1)],
                "topic string, key string, value string, partition int",
            )
            .write.format(fmt)
            .option("kafka.bootstrap.servers", servers)
            .save()
        )
        case(
            "batch write: topic and partition columns, no save mode",
            read("kafka", subscribe=saved).select("key", "value", "partition", "offset").collect(),
        )

    Path(out).write_text(json.dumps(results))
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:5])
