"""A driver with its UI up and Spark's PrometheusServlet on (the shared test session has no UI),
for test_monitoring. Reads commands from stdin, one per line, and answers each with a JSON line:

- ``copy <servers> <mid> <out> <checkpoint> [plain]``: reads intermediate stream ``mid`` with
  AvailableNow and writes it to intermediate stream ``out`` with the streamctl sink (with ``plain``,
  both as plain streams); answers once the query ended.
- ``start <servers> <src> <mid> <checkpoint> <name> [first]``: starts query ``name`` reading plain
  ``src`` and intermediate ``mid`` (30 records a batch, one batch an hour; stream ``first``, if
  given, in a higher priority tier); answers after its first batch.
- ``start-another ...``: the same, beside that query.
- ``stop``: stops those queries. ``exit``: ends the driver.

The first line it prints is ``{"ui": <driver UI URL>, "app": <application id>}``.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

import streamctl
from streamctl import options


def answer(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def start_noop(rows: DataFrame, checkpoint: str, name: str) -> StreamingQuery:
    """Starts ``rows`` into the noop sink, a batch an hour, and answers once its first batch reported."""
    query = (
        rows.writeStream.format("noop")
        .queryName(name)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="1 hour")
        .start()
    )
    while query.lastProgress is None and query.isActive:
        query.awaitTermination(0.2)
    answer(started=query.isActive)
    return query


if __name__ == "__main__":
    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "true")
        .config("spark.ui.port", "0")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.streaming.noDataMicroBatches.enabled", "false")
        .config("spark.metrics.conf.*.sink.prometheusServlet.class", "org.apache.spark.metrics.sink.PrometheusServlet")
        .config("spark.metrics.conf.*.sink.prometheusServlet.path", "/metrics/prometheus")
    )
    spark = streamctl.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    answer(ui=spark.sparkContext.uiWebUrl, app=spark.sparkContext.applicationId)
    query = None
    others: list[StreamingQuery] = []
    for line in sys.stdin:
        command, *args = line.split()
        if command == "copy":
            servers, mid, out, checkpoint, *plain = args
            intermediate = not plain
            q = (
                spark.readStream.format("streamctl")
                .options(**options.source(servers, [mid], starting_offsets="earliest"))
                .options(**(options.intermediate(mid) if intermediate else {}))
                .load()
                .select("key", "value")
                .writeStream.format("streamctl")
                .options(**options.sink(servers, out, intermediate=intermediate))
                .option("checkpointLocation", checkpoint)
                .trigger(availableNow=True)
                .start()
            )
            q.awaitTermination(180)
            answer(copied=q.exception() is None)
        elif command in ("start", "start-another"):
            servers, src, mid, checkpoint, name, *first = args
            rows = (
                spark.readStream.format("streamctl")
                .options(**options.source(servers, [src, mid], starting_offsets="earliest", max_records_per_batch=30))
                .options(**options.intermediate(mid))
                .options(**(options.priority(first[0], 1) if first else {}))
                .load()
            )
            started = start_noop(rows, checkpoint, name)
            if command == "start":
                query = started
            else:
                others.append(started)
        elif command == "union":
            # With "plain", the second source reads a plain stream (no control messages).
            servers, ended, running, checkpoint, name, *plain = args
            sources = [
                spark.readStream.format("streamctl")
                .options(**options.source(servers, [mid], starting_offsets="earliest"))
                .options(**({} if plain and mid == running else options.intermediate(mid)))
                .load()
                for mid in (ended, running)
            ]
            query = start_noop(sources[0].unionByName(sources[1]), checkpoint, name)
        elif command == "stop":
            assert query is not None
            for q in [query, *others]:
                q.stop()
            others.clear()
            answer(stopped=True)
        elif command == "exit":
            break
    spark.stop()
