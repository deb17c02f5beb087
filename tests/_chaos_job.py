"""A query that writes every batch of a stream to a file of its own, named by batch id and
replaced atomically (an idempotent sink), until it is killed (used by test_chaos); with a last
argument ``transactional``, stage 1 of a pipeline instead: a copy into an intermediate stream
through the transactional sink, the output argument naming that stream. ``--executors
N`` runs it on ``local-cluster`` with N executor JVMs of its own (for kills of executors)."""

from __future__ import annotations

import argparse
import json
import os
import threading
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

import streamctl_testing
from streamctl import options
from streamctl_testing import kafka
from streamctl_testing._jvm import jvm
from streamctl_testing.demos.affinity import local_cluster


class LiveProducer(threading.Thread):
    """Writes numbered records (the values 0, 1, 2, ...) round the partitions, about 200 a second,
    until stopped (used by test_chaos and test_broker_failures)."""

    def __init__(self, spark, servers: str, stream: str, partitions: int) -> None:
        super().__init__(daemon=True)
        self.spark, self.servers, self.stream, self.partitions = spark, servers, stream, partitions
        self.sent = 0
        self.stopped = threading.Event()
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            while not self.stopped.wait(0.1):
                numbers = range(self.sent, self.sent + 20)
                values = [str(i).encode() for i in numbers]
                partitions = [i % self.partitions for i in numbers]
                kafka.produce(self.spark, self.servers, self.stream, values, partitions=partitions)
                self.sent += len(values)
        except Exception as e:  # noqa: BLE001 - reported by the test, which fails on it
            self.error = e

    def stop(self) -> int:
        self.stopped.set()
        self.join(60)
        assert self.error is None, f"the producer failed: {self.error}"
        return self.sent


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


def start_pipeline_stage(
    spark: SparkSession,
    servers: str,
    stream: str,
    checkpoint: str,
    mid: str,
    stalls: tuple[str, str] | None = None,
    transactional: bool = True,
    **trigger: object,
) -> StreamingQuery:
    """Stage 1 of a pipeline: copies the stream to intermediate stream ``mid``, in Kafka
    transactions unless ``transactional=False`` (the at-least-once sink).
    ``stalls`` (values, folder): the first attempt that writes one of those values (comma-separated)
    stalls there, after the rows before it, and names its executor in that folder
    (``TaskAttemptFaults.stall_and_tell``; the session needs the streamctl-testing jar)."""
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", max_records_per_batch=300))
        .load()
    )
    if stalls is None:
        df = df.select("key", "value")
    else:
        jvm(spark).streamctl.testing.TaskAttemptFaults.register(spark._jsparkSession)  # noqa: SLF001
        at, folder = stalls
        df = df.selectExpr("key", f"stall_and_tell(CAST(value AS STRING), '{at}', '{folder}', 600000) AS value")
    writer = (
        df.writeStream.format("streamctl")
        .options(**options.sink(servers, mid, intermediate=True, transactional=transactional))
        .option("checkpointLocation", checkpoint)
    )
    return writer.trigger(**trigger).start()  # type: ignore[arg-type]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("servers")
    parser.add_argument("stream")
    parser.add_argument("checkpoint")
    parser.add_argument("output")
    parser.add_argument("mode", nargs="?", choices=["transactional"])
    # --executors: on local-cluster, executor JVMs of their own, for kills of executors; the job then
    # writes its application id to --app-id-file, so the test finds their processes.
    parser.add_argument("--executors", type=int, help="run on local-cluster with this many executor JVMs")
    parser.add_argument("--app-id-file")
    parser.add_argument("--stall-at", help="values whose first writing attempt stalls (start_pipeline_stage)")
    parser.add_argument("--stall-folder", help="where a stalled attempt names its executor")
    args = parser.parse_args()
    builder = local_cluster(args.executors) if args.executors else SparkSession.builder.master("local[2]")
    session = streamctl_testing.configure_spark(
        builder.config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
    ).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    if args.app_id_file:
        Path(args.app_id_file).write_text(session.sparkContext.applicationId)
    where = (session, args.servers, args.stream, args.checkpoint, args.output)
    if args.mode == "transactional":
        stalls = (args.stall_at, args.stall_folder) if args.stall_at else None
        query = start_pipeline_stage(*where, stalls, processingTime="100 milliseconds")
    else:
        query = start_chaos_query(*where, processingTime="100 milliseconds")
    query.awaitTermination()
