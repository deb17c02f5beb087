"""A query that writes every batch of a stream to a file of its own, named by batch id and
replaced atomically (an idempotent sink), until it is killed (used by test_chaos)."""

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


if __name__ == "__main__":
    servers, stream, checkpoint, output = sys.argv[1:5]
    session = streamctl.configure_spark(
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
    ).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    query = start_chaos_query(session, servers, stream, checkpoint, output, processingTime="100 milliseconds")
    query.awaitTermination()
