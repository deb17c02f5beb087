"""A real-time query that copies a stream to a plain stream until killed (used by test_real_time)."""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

import streamctl
from streamctl import options

REAL_TIME_CONFS = {
    # Spark admits only its own sinks in real-time mode unless this check is off (docs/real-time.md).
    "spark.sql.streaming.realTimeMode.allowlistCheck": "false",
    # Spark's minimum batch duration is 5 s; tests use shorter batches (a batch is a checkpoint interval).
    "spark.sql.streaming.realTimeMode.minBatchDuration": "1000",
}


def start_copy(spark: SparkSession, servers: str, src: str, out: str, checkpoint: str, duration: str) -> StreamingQuery:
    """``offset:value`` of every record of ``src``, written to ``out`` by the streamctl sink in real-time mode."""
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [src], starting_offsets="earliest"))
        .load()
        .select(F.concat_ws(":", F.col("offset").cast("string"), F.col("value").cast("string")).alias("value"))
    )
    return (
        df.writeStream.format("streamctl")
        .options(**options.sink(servers, out))
        .outputMode("update")
        .option("checkpointLocation", checkpoint)
        .option("asyncProgressTrackingEnabled", "false")
        .trigger(realTime=duration)
        .start()
    )


if __name__ == "__main__":
    servers, src, out, checkpoint = sys.argv[1:5]
    builder = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    for k, v in REAL_TIME_CONFS.items():
        builder = builder.config(k, v)
    session = streamctl.configure_spark(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    start_copy(session, servers, src, out, checkpoint, "2 seconds").awaitTermination()
