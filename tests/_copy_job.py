"""A query that copies a stream into a parquet table, slowly, until killed (used by test_exactly_once)."""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

import streamctl
from streamctl import options


def start_copy(
    spark: SparkSession, servers: str, stream: str, checkpoint: str, output: str, **trigger: object
) -> StreamingQuery:
    """The copy query, in 50-record batches; the test restarts the same query on the same checkpoint."""
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", max_records_per_batch=50))
        .load()
        .select("topic", "partition", "offset", "value")
    )
    writer = df.writeStream.format("parquet").option("path", output).option("checkpointLocation", checkpoint)
    return writer.trigger(**trigger).start()  # type: ignore[arg-type]


if __name__ == "__main__":
    servers, stream, checkpoint, output = sys.argv[1:5]
    session = streamctl.configure_spark(
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    ).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    start_copy(session, servers, stream, checkpoint, output, processingTime="200 milliseconds").awaitTermination()
