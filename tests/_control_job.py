"""A query that copies an intermediate stream into a parquet table until killed (used by test_control)."""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession

import streamctl
from streamctl import options

servers, stream, checkpoint, output = sys.argv[1:5]
spark = streamctl.configure_spark(
    SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
df = (
    spark.readStream.format("streamctl")
    .options(**options.source(servers, [stream], starting_offsets="earliest", max_records_per_batch=10))
    .options(**options.intermediate(stream))
    .load()
    .select("partition", "offset", "value")
)
q = (
    df.writeStream.format("parquet")
    .option("path", output)
    .option("checkpointLocation", checkpoint)
    .trigger(processingTime="200 milliseconds")
    .start()
)
q.awaitTermination()
