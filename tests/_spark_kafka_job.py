"""One query that reads with Spark's own Kafka connector (spark-sql-kafka-0-10 4.2.0 and its
kafka-clients 3.9.2, from Maven Central) and with streamctl, and writes with streamctl, in a
session of its own (used by test_spark_kafka). Prints a JSON line: the kafka-clients version the
JVM runs and the jars of the session."""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

import streamctl_testing
from streamctl import options
from streamctl_testing._jvm import jvm
from streamctl_testing.spark_kafka import spark_kafka_jars

if __name__ == "__main__":
    servers, kafka_stream, streamctl_stream, out, checkpoint = sys.argv[1:6]
    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.jars", ",".join(str(j) for j in spark_kafka_jars()))
    )
    # The connector's kafka-clients is on spark.jars, so configure_spark leaves streamctl's out.
    spark = streamctl_testing.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    by_kafka = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", kafka_stream)
        .option("startingOffsets", "earliest")
        .load()
    )
    by_streamctl = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [streamctl_stream], starting_offsets="earliest"))
        .load()
    )
    q = (
        by_kafka.select("key", "value")
        .union(by_streamctl.select("key", "value"))
        .writeStream.format("streamctl")
        .options(**options.sink(servers, out))
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    version = jvm(spark).org.apache.kafka.common.utils.AppInfoParser.getVersion()

    # A query that read with format("kafka"), restarted with format("streamctl") on its checkpoint.
    def moved(source: str) -> None:
        df = (
            spark.readStream.format(source)
            .option("kafka.bootstrap.servers", servers)
            .option("subscribe", kafka_stream)
            .option("startingOffsets", "earliest")
            .load()
        )
        done = df.writeStream.format("noop").option("checkpointLocation", checkpoint + "-moved")
        done.trigger(availableNow=True).start().awaitTermination()

    moved("kafka")
    try:
        moved("streamctl")
        refused = None
    except Exception as e:  # noqa: BLE001  (reported whole to the test)
        refused = str(e).split("\n")[0]
    print(json.dumps({"kafka_clients": version, "jars": spark.conf.get("spark.jars"), "moved": refused}))
    spark.stop()
