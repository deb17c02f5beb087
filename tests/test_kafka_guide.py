"""The Python examples of Spark's Structured Streaming + Kafka Integration Guide
(docs/streaming/structured-streaming-kafka-integration.md in apache/spark), each run unchanged
except for the format name ("kafka" -> "streamctl") and the broker address, on a real broker with
the guide's topics (topic1 with 2 partitions, topic2 with 1)."""

from __future__ import annotations

import re
import textwrap

from pyspark.sql import functions as F

from streamctl_testing import kafka

from conftest import idle_triggers, session_conf, wait_for

# The guide's examples, in its order: streaming sources, batch sources, streaming sinks, batch sinks.
SOURCES_STREAMING = [
    """
# Subscribe to 1 topic
df = spark \\
  .readStream \\
  .format("kafka") \\
  .option("kafka.bootstrap.servers", "host1:port1,host2:port2") \\
  .option("subscribe", "topic1") \\
  .load()
df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)")
""",
    """
# Subscribe to 1 topic, with headers
df = spark \\
  .readStream \\
  .format("kafka") \\
  .option("kafka.bootstrap.servers", "host1:port1,host2:port2") \\
  .option("subscribe", "topic1") \\
  .option("includeHeaders", "true") \\
  .load()
df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)", "headers")
""",
    """
# Subscribe to multiple topics
df = spark \\
  .readStream \\
  .format("kafka") \\
  .option("kafka.bootstrap.servers", "host1:port1,host2:port2") \\
  .option("subscribe", "topic1,topic2") \\
  .load()
df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)")
""",
    """
# Subscribe to a pattern
df = spark \\
  .readStream \\
  .format("kafka") \\
  .option("kafka.bootstrap.servers", "host1:port1,host2:port2") \\
  .option("subscribePattern", "topic.*") \\
  .load()
df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)")
""",
]

SOURCES_BATCH = [
    """
# Subscribe to 1 topic defaults to the earliest and latest offsets
df = spark \\
  .read \\
  .format("kafka") \\
  .option("kafka.bootstrap.servers", "host1:port1,host2:port2") \\
  .option("subscribe", "topic1") \\
  .load()
df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)")
""",
    '''
# Subscribe to multiple topics, specifying explicit Kafka offsets
df = spark \\
  .read \\
  .format("kafka") \\
  .option("kafka.bootstrap.servers", "host1:port1,host2:port2") \\
  .option("subscribe", "topic1,topic2") \\
  .option("startingOffsets", """{"topic1":{"0":23,"1":-2},"topic2":{"0":-2}}""") \\
  .option("endingOffsets", """{"topic1":{"0":50,"1":-1},"topic2":{"0":-1}}""") \\
  .load()
df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)")
''',
    """
# Subscribe to a pattern, at the earliest and latest offsets
df = spark \\
  .read \\
  .format("kafka") \\
  .option("kafka.bootstrap.servers", "host1:port1,host2:port2") \\
  .option("subscribePattern", "topic.*") \\
  .option("startingOffsets", "earliest") \\
  .option("endingOffsets", "latest") \\
  .load()
df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)")
""",
]

SINKS_STREAMING = [
    """
# Write key-value data from a DataFrame to a specific Kafka topic specified in an option
ds = df \\
  .selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)") \\
  .writeStream \\
  .format("kafka") \\
  .option("kafka.bootstrap.servers", "host1:port1,host2:port2") \\
  .option("topic", "topic1") \\
  .start()
""",
    """
# Write key-value data from a DataFrame to Kafka using a topic specified in the data
ds = df \\
  .selectExpr("topic", "CAST(key AS STRING)", "CAST(value AS STRING)") \\
  .writeStream \\
  .format("kafka") \\
  .option("kafka.bootstrap.servers", "host1:port1,host2:port2") \\
  .start()
""",
]

SINKS_BATCH = [
    """
# Write key-value data from a DataFrame to a specific Kafka topic specified in an option
df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)") \\
  .write \\
  .format("kafka") \\
  .option("kafka.bootstrap.servers", "host1:port1,host2:port2") \\
  .option("topic", "topic1") \\
  .save()
""",
    """
# Write key-value data from a DataFrame to Kafka using a topic specified in the data
df.selectExpr("topic", "CAST(key AS STRING)", "CAST(value AS STRING)") \\
  .write \\
  .format("kafka") \\
  .option("kafka.bootstrap.servers", "host1:port1,host2:port2") \\
  .save()
""",
]


def _run(example: str, servers: str, **namespace: object) -> dict:
    code = textwrap.dedent(example).replace('format("kafka")', 'format("streamctl")')
    code = code.replace("host1:port1,host2:port2", servers)
    exec(compile(code, "<guide example>", "exec"), namespace)
    return namespace


def _counts(spark, servers) -> dict[str, int]:
    df = spark.read.format("streamctl").option("kafka.bootstrap.servers", servers).option("subscribe", "topic1,topic2")
    return {r.topic: r["count"] for r in df.load().groupBy("topic").count().collect()}


def test_the_kafka_integration_guide_examples_run_with_the_format_swapped(spark, servers, tmp_path):
    kafka.create_stream(spark, servers, "topic1", 2)
    kafka.create_stream(spark, servers, "topic2", 1)
    kafka.produce(
        spark, servers, "topic1", [f"a{i}".encode() for i in range(60)], keys=[b"k"] * 60, partitions=[0] * 60
    )
    kafka.produce(spark, servers, "topic1", [b"b0", b"b1"], partitions=[1, 1])
    kafka.produce_with_headers(spark, servers, "topic2", b"h", [("trace", b"t")])

    # Streaming sources: the guide's reads start at latest, so each reads exactly one record written
    # to each topic it subscribes after it started (other tests' "topic" streams left out).
    for i, example in enumerate(SOURCES_STREAMING):
        ns = _run(example, servers, spark=spark)
        df = ns["df"]
        assert df.isStreaming
        rows: list = []
        cols = ["topic", "value", *(["headers"] if "headers" in df.columns else [])]
        q = (
            df.select(*cols)
            .writeStream.foreachBatch(lambda b, _i, rows=rows, cols=cols: rows.extend(b.select(*cols).collect()))
            .option("checkpointLocation", str(tmp_path / f"read-{i}"))
            .trigger(processingTime="100 milliseconds")
            .start()
        )
        try:
            wait_for("the query's first batch (its start at latest)", lambda q=q: q.lastProgress is not None, q)
            kafka.produce(spark, servers, "topic1", [f"new-{i}".encode()], partitions=[1])
            kafka.produce_with_headers(spark, servers, "topic2", f"new-{i}".encode(), [("n", str(i).encode())])
            topics = ["topic1"] if i < 2 else ["topic1", "topic2"]

            def mine(rows=rows) -> list:
                return sorted((r.topic, bytes(r.value).decode()) for r in rows if r.topic in ("topic1", "topic2"))

            wait_for(f"example {i}'s records", lambda topics=topics: len(mine()) >= len(topics), q)
            idle_triggers(q)
            assert mine() == [(t, f"new-{i}") for t in topics], (i, mine())
            if "headers" in cols:
                assert [r.headers for r in rows] == [None], "topic1's record has no headers"
        finally:
            q.stop()

    counts = [_run(example, servers, spark=spark)["df"].count() for example in SOURCES_BATCH[:2]]
    # topic1: 60 + 2 + 4 records; topic2: 1 + 4; explicit offsets: topic1 p0 23..49 and p1 all, topic2 all.
    assert counts == [66, 27 + 6 + 5]
    # The pattern is found anywhere in a name, as the built-in's: other tests' topics on this broker
    # with "topic" inside their names are read too.
    by_topic = {
        r.topic: r["count"]
        for r in _run(SOURCES_BATCH[2], servers, spark=spark)["df"].groupBy("topic").count().collect()
    }
    assert (by_topic.pop("topic1"), by_topic.pop("topic2")) == (66, 5)
    assert all(re.search("topic.*", t) for t in by_topic), by_topic

    with session_conf(spark, {"spark.sql.streaming.checkpointLocation": str(tmp_path / "sinks")}):
        before = _counts(spark, servers)
        source = (
            spark.readStream.format("streamctl")
            .option("kafka.bootstrap.servers", servers)
            .option("subscribe", "topic2")
            .option("startingOffsets", "earliest")
            .load()
        )
        for i, example in enumerate(SINKS_STREAMING):
            df = source if i == 0 else source.withColumn("topic", F.lit("topic1"))
            ds = _run(example, servers, df=df)["ds"]
            ds.processAllAvailable()
            ds.stop()
            assert ds.exception() is None
        after = _counts(spark, servers)
        assert after["topic1"] == before["topic1"] + 2 * before["topic2"]

        batch = spark.createDataFrame([("topic2", "k", "v")], ["topic", "key", "value"])
        for example in SINKS_BATCH:
            _run(example, servers, df=batch)
        final = _counts(spark, servers)
        assert (final["topic1"], final["topic2"]) == (after["topic1"] + 1, after["topic2"] + 1)
