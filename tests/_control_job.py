"""A query that copies an intermediate stream into a parquet table until killed (used by test_control).

With ``--kill-after N`` it runs with stop on end-of-stream off and SIGKILLs itself (driver and Spark
JVM) the moment Spark's commit log holds batch N: a crash after the batch committed and before the
next is planned. Otherwise it reads ``--max-records`` records a batch and is killed by the test.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time
from pathlib import Path

from pyspark.sql import SparkSession

import streamctl
from streamctl import options

parser = argparse.ArgumentParser()
parser.add_argument("servers")
parser.add_argument("stream")
parser.add_argument("checkpoint")
parser.add_argument("output")
parser.add_argument("--kill-after", type=int, help="SIGKILL this process group once batch N committed")
parser.add_argument("--max-records", type=int, default=10, help="records a batch (without --kill-after)")
args = parser.parse_args()


def kill_at_commit(commit: Path) -> None:
    while not commit.exists():
        time.sleep(0.001)
    os.killpg(0, signal.SIGKILL)


if args.kill_after is not None:
    commit = Path(args.checkpoint) / "commits" / str(args.kill_after)
    threading.Thread(target=kill_at_commit, args=(commit,), daemon=True).start()
    source = options.source(args.servers, [args.stream], starting_offsets="earliest", stop_on_end_of_stream=False)
else:
    source = options.source(
        args.servers, [args.stream], starting_offsets="earliest", max_records_per_batch=args.max_records
    )
spark = streamctl.configure_spark(
    SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
df = (
    spark.readStream.format("streamctl")
    .options(**source)
    .options(**options.intermediate(args.stream))
    .load()
    .select("partition", "offset", "value")
)
q = (
    df.writeStream.format("parquet")
    .option("path", args.output)
    .option("checkpointLocation", args.checkpoint)
    .trigger(processingTime="200 milliseconds")
    .start()
)
q.awaitTermination()
