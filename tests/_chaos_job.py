"""A query that writes every batch of a stream to a file of its own, named by batch id and
replaced atomically (an idempotent sink), until it is killed (used by test_chaos); with a last
argument ``transactional``, stage 1 of a pipeline instead: a copy into an intermediate stream
through the transactional sink, the output argument naming that stream."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

import streamctl
from streamctl import options


def start_chaos_query(
    spark: SparkSession, servers: str, stream: str, checkpoint: str, output: str, **trigger: object
) -> StreamingQuery:
    """The query under test; the test restarts the same query on the same checkpoint."""
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)

    def write(batch, batch_id):
        read = batch.select("partition", "offset", "value").collect()
        rows = [[r.partition, r.offset, r.value.decode()] for r in read]
        tmp = out / f".batch-{batch_id}.tmp"
        tmp.write_text(json.dumps(rows))
        os.replace(tmp, out / f"batch-{batch_id}.json")  # a replayed batch writes the same file again

    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", max_records_per_batch=300))
        .load()
    )
    writer = df.writeStream.foreachBatch(write).option("checkpointLocation", checkpoint)
    return writer.trigger(**trigger).start()  # type: ignore[arg-type]


def start_transactional_stage(
    spark: SparkSession, servers: str, stream: str, checkpoint: str, mid: str, **trigger: object
) -> StreamingQuery:
    """Stage 1 of a pipeline: copies the stream to intermediate stream ``mid`` in Kafka transactions."""
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", max_records_per_batch=300))
        .load()
        .select("key", "value")
    )
    writer = (
        df.writeStream.format("streamctl")
        .options(**options.sink(servers, mid, intermediate=True, transactional=True))
        .option("checkpointLocation", checkpoint)
    )
    return writer.trigger(**trigger).start()  # type: ignore[arg-type]


if __name__ == "__main__":
    servers, stream, checkpoint, output = sys.argv[1:5]
    transactional = sys.argv[5:] == ["transactional"]
    session = streamctl.configure_spark(
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
    ).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    start = start_transactional_stage if transactional else start_chaos_query
    query = start(session, servers, stream, checkpoint, output, processingTime="100 milliseconds")
    query.awaitTermination()
