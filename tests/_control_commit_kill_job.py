"""A query that copies an intermediate stream into a parquet table, with stop on end-of-stream off, and
SIGKILLs itself (driver and Spark JVM) the moment Spark's commit log holds batch ``kill_after``: a crash
after the batch committed and before the next is planned (used by test_control)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

from pyspark.sql import SparkSession

import streamctl
from streamctl import options

servers, stream, checkpoint, output, kill_after = sys.argv[1:6]
commit = Path(checkpoint) / "commits" / kill_after


def kill_at_commit() -> None:
    while not commit.exists():
        time.sleep(0.001)
    os.killpg(0, signal.SIGKILL)


threading.Thread(target=kill_at_commit, daemon=True).start()
spark = streamctl.configure_spark(
    SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
df = (
    spark.readStream.format("streamctl")
    .options(**options.source(servers, [stream], starting_offsets="earliest", stop_on_end_of_stream=False))
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
