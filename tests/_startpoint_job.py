"""A query that records the offsets of its first batch in a file and then hangs in that batch,
before the commit, until killed (used by test_startpoints to crash between apply and commit)."""

from __future__ import annotations

import json
import sys
import time

from pyspark.sql import SparkSession

import streamctl
from streamctl import options

servers, stream, checkpoint, marker = sys.argv[1:5]
spark = streamctl.configure_spark(
    SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")


def hang(batch, batch_id):
    read: dict[int, list[int]] = {}
    for r in batch.select("partition", "offset").collect():
        read.setdefault(r.partition, []).append(r.offset)
    with open(marker + ".tmp", "w") as f:
        json.dump({"batch": batch_id, "read": {p: sorted(o) for p, o in read.items()}}, f)
    import os

    os.replace(marker + ".tmp", marker)
    time.sleep(3600)


df = (
    spark.readStream.format("streamctl")
    .options(**options.source(servers, [stream], starting_offsets="earliest"))
    .load()
)
df.writeStream.foreachBatch(hang).option("checkpointLocation", checkpoint).start().awaitTermination()
