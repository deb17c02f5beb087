"""A driver whose session already has streamctl's listener from
``spark.sql.streaming.streamingQueryListeners`` (as a cluster's spark-defaults.conf may set it) runs
two queries on an intermediate stream that has ended (used by test_listener). Prints a JSON line:
whether each stopped by itself, and how many streamctl listeners the session has."""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

import streamctl
from streamctl import options

from conftest import streamctl_listeners

if __name__ == "__main__":
    servers, stream, workdir = sys.argv[1:4]
    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.streaming.streamingQueryListeners", streamctl.LISTENER_CLASS)
    )
    spark = streamctl.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    stopped = []
    for run in range(2):
        df = (
            spark.readStream.format("streamctl")
            .options(**options.source(servers, [stream], starting_offsets="earliest"))
            .options(**options.intermediate(stream))
            .load()
        )
        q = (
            df.writeStream.format("noop")
            .option("checkpointLocation", f"{workdir}/cp{run}")
            .trigger(processingTime="200 milliseconds")
            .start()
        )
        stopped.append(q.awaitTermination(120))
    print(json.dumps({"stopped": stopped, "listeners": streamctl_listeners(spark)}))
    spark.stop()
