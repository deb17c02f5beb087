"""A Spark Connect client (used by test_connect; a process that has a classic session cannot be a
Connect client too): runs a streamctl query on the server, then every public helper through
``SparkSession.builder.remote(url)``, and prints a JSON line of what each returned.

Args: connect url, bootstrap servers, input stream, intermediate stream, work dir.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import streamctl
from streamctl import options


def _entries(entries: list[streamctl.startpoints.StartpointEntry]) -> list[list]:
    return [[e.stream, e.partition, e.task, e.description, e.offset] for e in entries]


if __name__ == "__main__":
    url, servers, src, mid, work = sys.argv[1:6]
    spark = SparkSession.builder.remote(url).getOrCreate()
    assert spark.is_connect if hasattr(spark, "is_connect") else "connect" in type(spark).__module__
    out: dict = {}
    cp = f"{work}/cp"

    # The data path (the source and the sink) over Connect; it records the query's task mapping.
    query = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [src], starting_offsets="earliest"))
        .load()
        .select("key", "value")
        .writeStream.format("streamctl")
        .options(**options.sink(servers, mid, intermediate=True))
        .option("checkpointLocation", cp)
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    query.processAllAvailable()
    # Declares the inputs ended: the query stops and sends end-of-stream downstream.
    streamctl.end_of_stream(query, spark)
    out["stopped"] = not query.isActive

    # A downstream query stops by itself at that end-of-stream: the listener came with the source.
    # Its windows follow the upstream watermark (with_upstream_watermark reads the column's metadata).
    events = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [mid], starting_offsets="earliest"))
        .options(**options.intermediate(mid))
        .load()
        .select("timestamp", "watermark")
    )
    windowed = streamctl.with_upstream_watermark(events, "timestamp")
    out["upstream_watermark_schema"] = windowed.schema.json()
    downstream = (
        windowed.groupBy(F.window("timestamp", "1 hour"))
        .count()
        .writeStream.format("memory")
        .queryName("connect_windows")
        .outputMode("complete")
        .option("checkpointLocation", f"{work}/cp-downstream")
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    out["downstream_stopped"] = downstream.awaitTermination(180)
    out["downstream_counted"] = sum(r["count"] for r in spark.table("connect_windows").collect())

    out["tasks"] = [list(t) for t in streamctl.describe_tasks(spark, checkpoint=cp)]
    out["live_executors"] = [list(e) for e in streamctl.live_executors(spark)]

    manager = streamctl.StartpointManager(spark, checkpoint=cp, bootstrap_servers=servers)
    out["location"] = manager.location
    out["preview"] = _entries(manager.preview(src, None, streamctl.Startpoint.oldest()))
    out["set"] = _entries(manager.set(src, 0, streamctl.Startpoint.specific(2)))
    got = manager.get(src, 0)
    out["get"] = None if got is None else [got.type, got.offset]
    out["list"] = _entries(manager.list())
    out["deleted"] = _entries(manager.delete(src))
    out["list_after_delete"] = _entries(manager.list())

    # Errors: the JVM's message first, as StreamctlException.
    errors = {}
    for name, call in {
        "describe_tasks": lambda: streamctl.describe_tasks(spark, checkpoint=f"{work}/never-ran"),
        "set_beyond_end": lambda: manager.set(src, 0, streamctl.Startpoint.specific(10**9)),
        "bad_source_option": lambda: (
            spark.readStream.format("streamctl")
            .options(**options.source(servers, [src]))
            .option("max.record.per.batch", "1")
            .load()
            .schema
        ),
    }.items():
        try:
            call()
            errors[name] = None
        except streamctl.StreamctlException as e:
            errors[name] = [str(e), e.getCondition()]
    out["errors"] = errors
    # A store with an assignment the test wrote (local mode assigns none itself).
    store = f"{work}/locality-store"
    out["locality"] = [list(r) for r in streamctl.describe_locality(spark, metadata_store_path=store).collect()]

    print(json.dumps(out))
    spark.stop()
