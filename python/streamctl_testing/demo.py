"""``python -m streamctl demo``: streamctl end to end on an embedded Kafka broker (part of streamctl-testing).

Each capability adds one step; every step says in plain words what it did and what it saw.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

import streamctl_testing
from streamctl import options
from streamctl_testing import kafka, kafka_broker
from streamctl_testing.demos import DemoProblem, problem, say
from streamctl_testing.demos.affinity import step_host_affinity
from streamctl_testing.demos.choosers import step_bootstrap, step_priority
from streamctl_testing.demos.grouping import step_partition_expansion
from streamctl_testing.demos.pipeline import step_control_pipeline
from streamctl_testing.demos.startpoints import step_startpoints


@dataclass
class DemoContext:
    spark: SparkSession
    servers: str
    workdir: Path

    def checkpoint(self, name: str) -> str:
        return str(self.workdir / "checkpoints" / name)


def run_available_now(df, checkpoint: str, sink: str = "memory", name: str | None = None, **opts: str) -> object:
    writer = df.writeStream.format(sink).option("checkpointLocation", checkpoint).trigger(availableNow=True)
    if name:
        writer = writer.queryName(name)
    q = writer.options(**opts).start()
    q.awaitTermination()
    return q


def step_source_and_sink(ctx: DemoContext) -> None:
    """Foundation: read a topic with the streamctl source, write an intermediate topic with the sink, read it back."""
    spark, servers = ctx.spark, ctx.servers
    kafka.create_stream(spark, servers, "orders", 4)
    kafka.create_stream(spark, servers, "orders-by-customer", 4)
    n = 4000
    kafka.produce(
        spark,
        servers,
        "orders",
        [json.dumps({"order": i, "amount": i % 97}).encode() for i in range(n)],
        keys=[f"customer-{i % 40}".encode() for i in range(n)],
        partitions=[i % 4 for i in range(n)],
    )
    say(f"Produced {n} orders over 4 partitions of topic 'orders'.")

    orders = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, ["orders"], starting_offsets="earliest", max_records_per_batch=1000))
        .load()
    )
    q = run_available_now(
        orders.select("key", "value"),
        ctx.checkpoint("copy"),
        sink="streamctl",
        **options.sink(servers, "orders-by-customer", intermediate=True),
    )
    batches = [p for p in q.recentProgress if p["numInputRows"] > 0]
    say(
        f"Query 1 read them with format('streamctl') in {len(batches)} batches of at most 1000 records "
        f"(maxOffsetsPerTrigger) and wrote them, keyed by customer, to intermediate topic 'orders-by-customer', "
        f"one Kafka transaction per batch and writer (the default for intermediate streams: read_committed "
        f"readers see each record once, even after a retried or re-run batch)."
    )

    back = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, ["orders-by-customer"], starting_offsets="earliest"))
        .options(**options.intermediate("orders-by-customer"))
        .load()
    )
    run_available_now(back, ctx.checkpoint("read-back"), name="by_customer")
    per_task = spark.sql(
        "select task, count(*) n, count(distinct key) customers from by_customer group by task order by task"
    ).collect()
    say("Query 2 read the intermediate topic back (framing stripped); records per task:")
    for r in per_task:
        say(f"    {r.task}: {r.n} records from {r.customers} customers")
    total = sum(r.n for r in per_task)
    if total != n:
        raise problem(f"{total} of the {n} records came back")
    say(f"All {total} records came back, each customer's records in one partition, in order.")


STEPS: list[tuple[str, Callable[[DemoContext], None]]] = [
    ("Source and sink over Kafka", step_source_and_sink),
    ("Startpoints: rewind a query by one hour, keeping its state", step_startpoints),
    ("Choosers: a bootstrap stream is read first", step_bootstrap),
    ("Choosers: a live stream has priority over a backfill", step_priority),
    ("Partition expansion under a running keyed count", step_partition_expansion),
    ("Host affinity", step_host_affinity),
    ("A two-stage pipeline that ends by itself (in-band control)", step_control_pipeline),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamctl demo", description=__doc__)
    parser.add_argument("--servers", help="use this Kafka instead of starting an embedded broker")
    args = parser.parse_args(argv)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    with tempfile.TemporaryDirectory(prefix="streamctl-demo-") as tmp:
        started = time.monotonic()
        broker_cm = kafka_broker() if args.servers is None else None
        broker = broker_cm.__enter__() if broker_cm else None
        try:
            servers = args.servers or broker.bootstrap_servers  # type: ignore[union-attr]
            if broker is not None:
                say(f"Started an embedded Kafka broker at {servers} in {time.monotonic() - started:.1f} s.")
            spark = streamctl_testing.configure_spark(
                SparkSession.builder.master("local[2]")
                .appName("streamctl-demo")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", "4")
            ).getOrCreate()
            spark.sparkContext.setLogLevel("ERROR")
            ctx = DemoContext(spark, servers, Path(tmp))
            failed = False
            try:
                for i, (title, step) in enumerate(STEPS, 1):
                    say(f"\n[{i}/{len(STEPS)}] {title}")
                    step(ctx)
            except DemoProblem:
                failed = True  # said where it was seen; the rest of the demo would build on it
            spark.stop()
        finally:
            if broker_cm is not None:
                broker_cm.__exit__(None, None, None)
                say("\nStopped the embedded broker.")
    return 1 if failed else 0
