"""Scale: the steady-state cost of one micro-batch as a topic grows from 8 to 4,096 partitions,
streamctl against Spark's built-in Kafka source, in one run on one broker.

Per size P, one topic of P partitions holds ``per_partition`` records of 100 B in every partition;
each source reads it with ``Trigger.AvailableNow``, ``maxOffsetsPerTrigger`` = 2 x P (so a batch
carries about 2 records per partition: the small batches of a live topic) and the ``noop`` sink.
Figures are medians over batches 1-9 (batch 0 is the first batch, reported apart): the batch's
``triggerExecution`` and every ``durationMs`` phase Spark reports; per task attempt its wall time
(executor run time) and CPU time (streamctl.testing.TaskTimes, a SparkListener); the bytes of the
checkpoint and metadata-store files created or rewritten per batch (the query's checkpoint
directory, where both sources keep everything, scanned after every progress report by a JVM
listener, streamctl.testing.CheckpointBytes: a Python one slowed the batches it measured); and, for
streamctl, the consumers its readers created and reused per batch (source metrics).

Up to 128 partitions each source runs at both settings of bench.common.SETTINGS ("defaults": no
Kafka setting on either side; "tuned": the same consumer settings on both, the built-in's consumers
cached under a fixed group id as streamctl's are pooled); from 1,024 on only at "tuned", plus a
matched ``fetch.max.wait.ms=10`` on both sides at every size: the built-in's first batch creates a
consumer per partition and waits out about one fetch.max.wait.ms (500 ms) in each, which alone
took 37 s at 128 partitions (14 s with 10 ms) and would take about 18 minutes at 4,096. A
query's first batch is reported on its own. Every run checks that the query read every record.

An intermediate stream (framed records, as streamctl's sink writes them) with one watermark per
partition per batch is read by streamctl at every size up to 1,024 (tuned), for what its control
bookkeeping writes per batch: the readers' control results go to the metadata store as one value per
batch, written by the driver (they were one value per task). Three sizes show whether that is
constant in the partitions; at 4,096 the variant would add about four minutes to a group that must
stay under fifteen.

``first_batch`` (group ``first-batch``, apart because the built-in's side alone takes minutes) times
a query's first batch with no Kafka setting on either side, without the matched ``fetch.max.wait.ms``
(so the built-in at Kafka's defaults, and streamctl at its own, which differ from Kafka's only in its
readers' ``fetch.max.wait.ms`` of 10 ms): the conditions under which issue #28 measured streamctl's
first batch ahead of the built-in's.

Before the first size, both sources read a warm-up topic (1,024 partitions, or the largest size
when smaller: that size's own topic when it is measured, so the group writes it once) in five
batches each, not measured: the JIT compiles Spark's and Kafka's per-task code
during the first tens of thousands of task attempts, its compiler threads taking much of one of the
two cores meanwhile, and the JVM's heap grows (first touches of new memory, kernel time), so without
it whichever source ran first at 1,024 partitions paid for that. Which source runs first still
moves a size's figures by up to a third, so up to 128 partitions, where the ratios are nearest the
goals, each source runs twice, in the order A B B A (streamctl first at the first size, the built-in
at the second), and its figures are medians over the steady batches of both runs; its first batch is
its first run's (the second run finds the consumers of the first). From 1,024 on each runs once
(streamctl first at 1,024, the built-in at 4,096): the second round at 1,024 took about 110 s of a
group that must stay under fifteen minutes on two cores, and moved no ratio there by more than 0.03
(streamctl's two runs 1,567 and 1,743 ms, the built-in's 5,081 and 5,333 on 2026-12-01), where
streamctl's batch is a third of the built-in's; at 4,096 a second round would take about five more
minutes.

Before each run of one source, the other's idle consumers are closed. In local mode the executor's
consumers live in the driver's JVM, and Spark's offset and commit logs on the local file system fork
`chmod` and `readlink` (Hadoop without its native library); a fork costs more the more files the
JVM holds open (docs/host-affinity.md gives this group's figures), and each pooled consumer
holds four (two sockets, a selector's two). streamctl's idle pool (about 3,500 files at 1,024
partitions) would otherwise slow the built-in's log writes as much as its own, and the built-in's
cache (up to its 64 consumers' selectors) streamctl's. Spark offers no call to empty its cache:
``_empty_builtin_cache`` reaches the connector's private pool by reflection, in this benchmark only.
The phase table gives the files the JVM holds open after each run.

At every size up to 1,024 partitions the group also runs Spark's own ``rate-micro-batch`` source
with P input partitions and 2 rows per partition a batch into the ``noop`` sink, in the same session
(the default trigger, stopped after batch 10: medians of batches 1-9 as for the others; halfway
through the sources' runs and after them): a source that needs no broker and reads nothing, so its
batch is Spark's own cost of P input partitions, the offset- and commit-log writes among them. No
source that plans one input partition per partition (the design's one task per Spark input
partition) can go below it, so the floor's ratio to the built-in's batch is the best ratio any such
source could reach at that size.

Spark's two log writes fork five processes each on a local-disk checkpoint (four ``readlink`` and one
``chmod``, counted with ``strace -f -e trace=execve`` on 2026-12-06: Spark's FileContext-based checkpoint
manager over Hadoop's local file system without its native library, as in the pyspark wheel), 40-50 ms
a write on the 2-core AMD EPYC, so at 8 partitions the log writes are most of every batch, the floor's
too. To tell that cost of the machine from Spark's own, at 8 partitions (where the ratio goal is
nearest the floor) the group runs both sources (tuned) and the floor once more with ``FEW_FORKS``, a
session setting and so matched on all three: Spark's FileSystem-based checkpoint manager over Hadoop's
raw local file system, one ``chmod`` a write and no checksum files. Each source runs twice (A B B A)
with the floor between; the table "Scale: with few forks" gives them, the log writes among them. It is a
measuring device, not a recommendation: it drops the checkpoint's checksums.

The floor bounds sources with one Spark input partition per partition. At 8 partitions, to bound every
source however it splits its input, the floor also runs with all 2 x P rows in one input partition
(beside each floor run above, and with few forks), and streamctl also runs with ``grouper=single``
(tuned, A B B A with the others): every partition in one task, so in one Spark input partition, read
by one core. The table "Scale: one Spark input partition instead of P" gives them, as Spark writes
its logs and with few forks.

Two streamctl queries reading one topic side by side (at the largest size up to 128 partitions,
tuned) report the consumers each created per steady-state batch: a pipeline's queries must not take
each other's. At 128 partitions they share a pool of 16 consumers on ``local[2]``, so their readers
borrow from each other.
"""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import struct
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from bench.common import BUILTIN_POOLED_GROUP, SETTINGS, kafka_options
from streamctl import options
from streamctl_testing import control, kafka
from streamctl_testing._jvm import jvm

# The scale group's two settings: bench.common.SETTINGS plus the same fetch.max.wait.ms on both sides (see above).
SCALE_SETTINGS = {name: {**s, "consumer": {**s["consumer"], "fetch.max.wait.ms": "10"}} for name, s in SETTINGS.items()}
# Sizes from which only the tuned settings run (each run's first batch costs the built-in minutes).
TUNED_ONLY_FROM = 1024
# Sizes up to which the intermediate-stream variant runs (see above).
FRAMED_UP_TO = 1024
# Sizes up to which Spark's floor runs (see above): at 4,096 partitions it added about 50 s to a
# group of 16-17 minutes on the 2-core AMD EPYC of 2026-12-01, where the built-in's batches alone
# take five, and no goal there is near the floor (streamctl at 0.25-0.32x the built-in's batch).
FLOOR_UP_TO = 1024
# Sizes up to which each source runs twice, once before the other and once after (see above).
BOTH_ORDERS_UP_TO = 128
SIZES = (8, 128, 1024, 4096)
# Records per partition: batches 0-9 at 2 a partition, batch 0 apart and the medians over 1-9.
RECORDS_PER_PARTITION = 20
# The warm-up topic's partitions (at most the largest size measured), its batches, and its records
# per partition when it is a topic of its own (2 a partition a batch, as measured).
WARM_UP_PARTITIONS = 1024
WARM_UP_BATCHES = 5
WARM_UP_RECORDS = 2 * WARM_UP_BATCHES
STREAMCTL, BUILTIN = "streamctl", "built-in"
# The name prefix of the threads that keep a source's progress history (ops.ProgressRecorder).
PROGRESS_THREAD = "streamctl-progress-"
# streamctl with every partition in one task (grouper=single), so in one Spark input partition.
SINGLE_TASK = "streamctl, grouper=single"
# Sizes up to which streamctl also runs as SINGLE_TASK (tuned) and the floor also with one input
# partition (see above).
ONE_INPUT_PARTITION_UP_TO = 8
# Spark's log writes with one fork each instead of five (see above), session-wide: Spark 4.1+'s class
# name (the benchmarks run on the newest line). Without the cache switched off, the local file
# system the session already holds would keep serving the checkpoint.
FEW_FORKS = {
    "spark.sql.streaming.checkpointFileManagerClass": (
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager"
    ),
    "fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
    "fs.file.impl.disable.cache": "true",
}
# Sizes up to which both sources and the floor also run with FEW_FORKS.
FEW_FORKS_UP_TO = 8
# The largest size at which two streamctl queries also read side by side (a few seconds there).
SIDE_BY_SIDE_UP_TO = 128
# No Kafka setting on either side, not even the matched fetch.max.wait.ms (first_batch only).
NO_KAFKA_SETTING = "no Kafka setting"
# The size at which issue #28 asks the first batch to stay 10x faster than the built-in's.
FIRST_BATCH_PARTITIONS = 1024
PHASES = ("latestOffset", "queryPlanning", "walCommit", "getBatch", "addBatch", "commitOffsets")
# The broker holds every size's topic at once (about 5,300 partitions): small index files keep its
# memory maps and file handles modest.
# One local executor runs every task, so streamctl's pool holds a consumer per partition (a Kafka
# consumer keeps its topic's metadata, about 0.6 KB per partition: 2.3 MB each at 4,096, about 9 GB in
# all; the built-in's cache keeps far fewer): 4,096 partitions ran out of the other benchmarks' 3 GB.
SESSION = {"spark.driver.memory": "10g"}
BROKER_PROPERTIES = {"log.index.size.max.bytes": str(64 << 10), "num.io.threads": "4"}


class _CheckpointBytes:
    """``streamctl.testing.CheckpointBytes``: after every progress report of the watched query, the
    bytes and files under its checkpoint that are new or changed since the report before; and the
    queries whose end every listener has been told of. It listens in the JVM: a Python listener,
    which PySpark feeds through dozens of py4j calls a report, made the batches it measured 70-100 ms
    slower at 128 partitions (A/B runs on 2026-12-02), the built-in's and the floor's as well."""

    def __init__(self, spark: SparkSession) -> None:
        self.jvm = jvm(spark)
        self.jvm_listener = self.jvm.streamctl.testing.CheckpointBytes()

    def watch(self, root: Path) -> None:
        self.jvm_listener.watch(str(root))

    def written(self, batch_id: int) -> tuple[int, int]:
        """(bytes, files) the batch wrote."""
        found = self.jvm_listener.written(batch_id)
        return int(found[0]), int(found[1])

    def wait_reported(self, batch_id: int, timeout_s: float = 10) -> None:
        """Until the listener has heard the batch's report: the last may still be on its way."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.jvm_listener.lastBatch() < batch_id:
            time.sleep(0.05)

    def wait_terminated(self, query_ids: list[str], timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while not all(self.jvm_listener.hasEnded(q) for q in query_ids):
            if time.monotonic() > deadline:
                ended = [q for q in query_ids if not self.jvm_listener.hasEnded(q)]
                raise RuntimeError(f"no end of queries {ended} in {timeout_s:g} s")
            time.sleep(0.05)
        # The sources' progress recorders keep the last batches' history on threads of their own
        # after the end; their threads end once it is kept (ops.ProgressRecorder).
        while any(
            t.getName().startswith(PROGRESS_THREAD) for t in self.jvm.java.lang.Thread.getAllStackTraces().keySet()
        ):
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the progress history of queries {query_ids} still being kept after {timeout_s:g} s"
                )
            time.sleep(0.05)


@contextlib.contextmanager
def _watching(spark: SparkSession) -> Iterator[tuple[Any, _CheckpointBytes]]:
    """Per task attempt times (streamctl.testing.TaskTimes) and checkpoint bytes (_CheckpointBytes), listening
    for the block."""
    times = jvm(spark).streamctl.testing.TaskTimes()
    context = spark.sparkContext._jsc.sc()  # noqa: SLF001 - the JVM SparkContext takes the listener
    context.addSparkListener(times)
    listener = _CheckpointBytes(spark)
    streams = spark._jsparkSession.streams()  # noqa: SLF001 - the JVM's manager takes a JVM listener
    streams.addListener(listener.jvm_listener)
    try:
        yield times, listener
    finally:
        streams.removeListener(listener.jvm_listener)
        context.removeSparkListener(times)


def _framed(
    spark: SparkSession, servers: str, partitions: int, per_partition: int, checkpoint: Path, listener: _CheckpointBytes
) -> dict[str, Any]:
    """streamctl over an intermediate stream carrying a watermark per partition per batch: bytes and
    files its checkpoint and store get per steady-state batch."""
    topic = f"bench-scale-framed-{partitions}"
    kafka.create_stream(spark, servers, topic, partitions)
    rounds = per_partition // 2
    for r in range(rounds):  # each batch of 3 offsets per partition: 2 records, then their watermark
        control.produce_synthetic_framed(spark, servers, topic, 2 * partitions, 100)
        control.send_watermark(spark, servers, topic, "upstream", 1, 1_700_000_000_000 + r)
    listener.watch(checkpoint)
    q = (
        spark.readStream.format("streamctl")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", topic)
        .options(**options.intermediate(topic))
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", 3 * partitions)
        .options(**kafka_options(SCALE_SETTINGS["tuned"]["consumer"]))
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    progress = _finished(q, listener, 2 * partitions * rounds, f"streamctl of {topic}")
    steady = [p for p in progress if 1 <= p["batchId"] <= 9]
    kafka.delete_stream(spark, servers, topic)
    written = [listener.written(p["batchId"]) for p in steady]
    out = {
        "partitions": partitions,
        "batch_ms": _median([p["durationMs"]["triggerExecution"] for p in steady]),
        "bytes_per_batch": _median([b for b, _ in written]),
        "files_per_batch": _median([f for _, f in written]),
    }
    print(
        f"    streamctl, framed with a watermark per partition per batch: batch {out['batch_ms']:.0f} ms, "
        f"{out['bytes_per_batch']:,.0f} B and {out['files_per_batch']:g} files per batch",
        flush=True,
    )
    return out


def _floor(
    spark: SparkSession, partitions: int, checkpoint: Path, input_partitions: int | None = None
) -> list[dict[str, Any]]:
    """Spark's ``rate-micro-batch`` source with 2 rows per partition a batch in ``input_partitions``
    input partitions (default: ``partitions``), into ``noop``: the batches 1-9 of a source that reads
    nothing (see the module's docstring)."""
    input_partitions = input_partitions or partitions
    q = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", 2 * partitions)
        .option("numPartitions", input_partitions)
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    try:
        deadline = time.monotonic() + 600
        while q.lastProgress is None or q.lastProgress["batchId"] < 10:
            if q.exception() is not None:
                raise q.exception()  # type: ignore[misc]
            if time.monotonic() > deadline:
                raise RuntimeError(f"rate-micro-batch with {input_partitions} partitions ran no 10 batches in 600 s")
            time.sleep(0.05)
    finally:
        q.stop()
    steady = [p["durationMs"] for p in q.recentProgress if 1 <= p["batchId"] <= 9]
    ms = _median([d["triggerExecution"] for d in steady])
    print(f"    floor ({2 * partitions} rows in {input_partitions} input partition(s)): batch {ms:.0f} ms", flush=True)
    return steady


def _floors(spark: SparkSession, partitions: int, tmp: Path, into: dict[int, list[list[dict[str, Any]]]]) -> list[Path]:
    """The floor with P input partitions and, up to ONE_INPUT_PARTITION_UP_TO, with one: each run's
    batches added to ``into`` under its input partitions. Returns the runs' checkpoints."""
    checkpoints = []
    for inputs in (partitions, 1) if 1 < partitions <= ONE_INPUT_PARTITION_UP_TO else (partitions,):
        runs = into.setdefault(inputs, [])
        checkpoints.append(tmp / f"{partitions}-floor-{inputs}-{len(runs)}")
        runs.append(_floor(spark, partitions, checkpoints[-1], inputs))
    return checkpoints


def _floor_summary(partitions: int, runs: list[list[dict[str, Any]]]) -> dict[str, Any]:
    steady = [d for r in runs for d in r]
    return {
        "partitions": partitions,
        "runs": len(runs),
        "batch_ms": _median([d["triggerExecution"] for d in steady]),
        "batch_ms_per_run": [_median([d["triggerExecution"] for d in r]) for r in runs],
        "phases_ms": {ph: _median([d.get(ph, 0) for d in steady]) for ph in PHASES},
    }


@contextlib.contextmanager
def _few_forks(spark: SparkSession) -> Iterator[None]:
    """The queries the block starts write their checkpoints with FEW_FORKS."""
    for key, value in FEW_FORKS.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key in FEW_FORKS:
            spark.conf.unset(key)


def _written_without_checksums(checkpoint: Path) -> None:
    """Raises unless the query's offset log has no checksum files, as FEW_FORKS writes it: a setting that
    did not take effect would put Hadoop's forks back into figures that claim to be without them."""
    crc = sorted(p.name for p in (checkpoint / "offsets").iterdir() if p.name.endswith(".crc"))
    if crc:
        raise RuntimeError(f"{checkpoint} has checksum files ({crc[0]}): FEW_FORKS did not take effect")


def _with_few_forks(
    spark: SparkSession,
    servers: str,
    topic: str,
    partitions: int,
    per_partition: int,
    tmp: Path,
    listener: _CheckpointBytes,
    times: Any,
) -> dict[str, Any]:
    """Both sources (tuned; streamctl also as SINGLE_TASK up to ONE_INPUT_PARTITION_UP_TO: A B C C B A)
    and the floor between them (also with one input partition there), with FEW_FORKS (the module's
    docstring)."""
    runs: dict[str, list[dict[str, Any]]] = {}
    floors: dict[int, list[list[dict[str, Any]]]] = {}
    half = (STREAMCTL, SINGLE_TASK, BUILTIN) if partitions <= ONE_INPUT_PARTITION_UP_TO else (STREAMCTL, BUILTIN)
    with _few_forks(spark):
        for i, source in enumerate(half + tuple(reversed(half))):
            if i == len(half):
                for checkpoint in _floors(spark, partitions, tmp / "few-forks", floors):
                    _written_without_checksums(checkpoint)
            checkpoint = tmp / f"{partitions}-few-forks-{_slug(source)}-{i}"
            one = _one_run(
                spark, servers, topic, partitions, per_partition, source, "tuned", checkpoint, listener, times
            )
            _written_without_checksums(checkpoint)
            runs.setdefault(source, []).append(one)
            print(
                f"    {source}, tuned, few forks: batch {_median([b['ms'] for b in one['steady']]):.0f} ms",
                flush=True,
            )
    return {
        "partitions": partitions,
        **{source: _summary(done) for source, done in runs.items()},
        "floor": _floor_summary(partitions, floors[partitions]),
        **({"floor_one_input_partition": _floor_summary(partitions, floors[1])} if 1 in floors else {}),
    }


def small_batches(spark: SparkSession, servers: str, topic: str, partitions: int) -> Any:
    """A streamctl reader of ``topic`` from its start, about 2 records per partition a batch, with the
    tuned consumer settings: the steady state these benchmarks measure."""
    return (
        spark.readStream.format("streamctl")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", 2 * partitions)
        .options(**kafka_options(SCALE_SETTINGS["tuned"]["consumer"]))
    )


def _two_queries(
    spark: SparkSession, servers: str, topic: str, partitions: int, checkpoints: Path, listener: _CheckpointBytes
) -> dict[str, Any]:
    """Two streamctl queries over one topic at once: the consumers each created and reused per steady-state batch."""
    queries = []
    for name in ("first", "second"):
        reader = small_batches(spark, servers, topic, partitions)
        queries.append(
            reader.load()
            .writeStream.format("noop")
            .option("checkpointLocation", str(checkpoints / name))
            .trigger(availableNow=True)
            .start()
        )
    out = {}
    for name, q in zip(("first", "second"), queries, strict=True):
        q.awaitTermination()
        metrics = [
            p["sources"][0].get("metrics") or {}
            for p in q.recentProgress
            if p["numInputRows"] > 0 and 1 <= p["batchId"] <= 9
        ]
        out[name] = {
            k: _median([float(m.get(k, "nan")) for m in metrics]) for k in ("consumersCreated", "consumersReused")
        }
    print(f"    two streamctl queries side by side, consumers created / reused per batch: {out}", flush=True)
    # Their progress history may still be some batches behind: the checkpoints go once it is kept
    # (on a slow machine it was writing as they went).
    listener.wait_terminated([str(q.id) for q in queries])
    return out


def _slug(source: str) -> str:
    """A source's label as a checkpoint directory's name."""
    return re.sub(r"[^a-z0-9-]+", "-", source)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _one_run(
    spark: SparkSession,
    servers: str,
    topic: str,
    partitions: int,
    per_partition: int,
    source: str,
    settings: str,
    checkpoint: Path,
    listener: _CheckpointBytes,
    times: Any,
    per_batch: int = 2,
) -> dict[str, Any]:
    """One query of ``source`` reading all of ``topic``, ``per_batch`` records per partition a batch."""
    # Neither source's idle consumers may slow the other's batches (the module's docstring).
    if source == BUILTIN:
        jvm(spark).streamctl.system.ConsumerPool.clear()
    else:
        _empty_builtin_cache(spark)
    consumer = {} if settings == NO_KAFKA_SETTING else SCALE_SETTINGS[settings]["consumer"]
    reader = spark.readStream.format("kafka" if source == BUILTIN else "streamctl")
    if source == SINGLE_TASK:
        reader = reader.option("grouper", "single")
    reader = reader.option("kafka.bootstrap.servers", servers).option("subscribe", topic)
    reader = reader.option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", per_batch * partitions)
    reader = reader.options(**kafka_options(consumer))
    if source == BUILTIN and settings == "tuned":
        reader = reader.option("kafka.group.id", BUILTIN_POOLED_GROUP)
    listener.watch(checkpoint)
    times.clear()
    q = (
        reader.load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    progress = _finished(q, listener, partitions * per_partition, f"{source} of {topic}")
    first = progress[0]
    first_tasks = _task_times(times, first["batchId"])
    return {
        "batches": len(progress),
        "open_files": _open_files(spark),
        "first_batch_ms": first["durationMs"]["triggerExecution"],
        "first_batch_phases_ms": {ph: first["durationMs"].get(ph, 0) for ph in PHASES},
        "first_batch_task_wall_ms": _median([t[0] for t in first_tasks]),
        "first_batch_task_cpu_ms": _median([t[1] for t in first_tasks]),
        "first_batch_consumers_created": _consumers(first, "consumersCreated"),
        # Batches 1-9, the steady state, each as it was measured: _summary takes medians over runs.
        "steady": [
            {
                "ms": p["durationMs"]["triggerExecution"],
                "phases": {ph: p["durationMs"].get(ph, 0) for ph in PHASES},
                **dict(zip(("bytes", "files"), listener.written(p["batchId"]), strict=True)),
                "created": _consumers(p, "consumersCreated"),
                "reused": _consumers(p, "consumersReused"),
                "tasks": _task_times(times, p["batchId"]),
            }
            for p in progress
            if 1 <= p["batchId"] <= 9
        ],
    }


def _finished(q: Any, listener: _CheckpointBytes, expected: int, reader: str) -> list[dict[str, Any]]:
    """The reports of the batches that read records, once the ``Trigger.AvailableNow`` query ``q`` ended
    having read ``expected`` records and the listener has heard its last report; ``reader`` names the
    source and topic in the error when it read another number."""
    q.awaitTermination()
    if q.exception() is not None:
        raise q.exception()  # type: ignore[misc]
    progress = [p for p in q.recentProgress if p["numInputRows"] > 0]
    listener.wait_reported(progress[-1]["batchId"])
    rows = sum(p["numInputRows"] for p in progress)
    if rows != expected:
        raise RuntimeError(f"{reader} read {rows} records, expected {expected}")
    return progress


def _task_times(times: Any, batch_id: int) -> list[tuple[float, float]]:
    """(wall, CPU) ms of each task attempt of a batch, from streamctl.testing.TaskTimes."""
    packed = bytes(times.forBatch(batch_id))
    values = struct.unpack(f">{len(packed) // 8}d", packed)
    return list(zip(values[::2], values[1::2], strict=True))


def _empty_builtin_cache(spark: SparkSession) -> None:
    """Closes the consumers the built-in source keeps cached in this JVM.

    Spark's connector offers no way to do it (its pool is a private field of ``KafkaDataConsumer``),
    so this reaches the field by reflection: benchmark tooling only, and it needs the connector of
    ``bench.common.connector_version`` or one laid out like it."""
    j = jvm(spark)
    loader = j.java.lang.Thread.currentThread().getContextClassLoader()
    field = loader.loadClass("org.apache.spark.sql.kafka010.consumer.KafkaDataConsumer$").getDeclaredField(
        "consumerPool"
    )
    field.setAccessible(True)
    field.get(None).reset()


def _open_files(spark: SparkSession) -> int:
    """How many files the Spark JVM holds open (local mode: the executor's consumers among them)."""
    return len(os.listdir(f"/proc/{jvm(spark).java.lang.ProcessHandle.current().pid()}/fd"))


def _consumers(progress: dict[str, Any], metric: str) -> float:
    """A streamctl source metric of one progress report (NaN for the built-in, which has none)."""
    return float((progress["sources"][0].get("metrics") or {}).get(metric, "nan"))


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One source's figures at one size and settings: the first batch of its first run (the later
    runs find the consumers of the one before), and medians over the steady batches of all its runs."""
    steady = [b for r in runs for b in r["steady"]]
    tasks = [t for b in steady for t in b["tasks"]]
    return {
        **{k: v for k, v in runs[0].items() if k.startswith("first_batch")},
        "runs": len(runs),
        "batches": [r["batches"] for r in runs],
        "batch_ms": _median([b["ms"] for b in steady]),
        "batch_ms_per_run": [_median([b["ms"] for b in r["steady"]]) for r in runs],
        "open_files_per_run": [r["open_files"] for r in runs],
        "phases_ms": {ph: _median([b["phases"][ph] for b in steady]) for ph in PHASES},
        "task_wall_ms": _median([t[0] for t in tasks]),
        "task_cpu_ms": _median([t[1] for t in tasks]),
        "tasks_per_batch": len(tasks) / max(1, len(steady)),
        "bytes_per_batch": _median([b["bytes"] for b in steady]),
        "files_per_batch": _median([b["files"] for b in steady]),
        "consumers_created_per_batch": _median([b["created"] for b in steady]),
        "consumers_reused_per_batch": _median([b["reused"] for b in steady]),
    }


def first_batch(spark: SparkSession, servers: str, partitions: int) -> list[dict[str, Any]]:
    """A query's first batch with each source at its defaults (no setting but the servers and the
    topic), reading a topic of ``partitions`` partitions that holds 2 records of 100 B in each, all in
    that one batch. streamctl runs first, on the colder JVM. Returns one result per source."""
    topic = f"bench-first-batch-{partitions}"
    found = []
    with _watching(spark) as (times, listener):
        kafka.create_stream(spark, servers, topic, partitions)
        kafka.produce_synthetic(spark, servers, topic, 2 * partitions, 100)
        with tempfile.TemporaryDirectory(prefix="streamctl-first-batch-") as tmp:
            for source in (STREAMCTL, BUILTIN):
                started = time.monotonic()
                r = _one_run(
                    spark, servers, topic, partitions, 2, source, NO_KAFKA_SETTING, Path(tmp) / source, listener, times
                )
                r.update(partitions=partitions, source=source, settings=NO_KAFKA_SETTING)
                print(
                    f"    {source} with no Kafka setting, {partitions:,} partitions: first batch "
                    f"{r['first_batch_ms']:,} ms, task wall/CPU {r['first_batch_task_wall_ms']:.0f}/"
                    f"{r['first_batch_task_cpu_ms']:.0f} ms ({time.monotonic() - started:,.0f} s in all)",
                    flush=True,
                )
                found.append(r)
        kafka.delete_stream(spark, servers, topic)
    return found


FIRST_BATCH_HEADER = (
    "partitions",
    "source",
    "first batch ms",
    "latestOffset / queryPlanning / addBatch ms",
    "task wall / CPU ms",
    "consumers created",
    "built-in / streamctl",
)


def first_batch_rows(found: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """One row per source of ``first_batch``; the last column is how many times faster streamctl's was."""
    by = {r["source"]: r for r in found}
    rows = []
    for r in found:
        ph = r["first_batch_phases_ms"]
        rows.append(
            (
                f"{r['partitions']:,}",
                r["source"],
                f"{r['first_batch_ms']:,}",
                f"{ph['latestOffset']:,} / {ph['queryPlanning']:,} / {ph['addBatch']:,}",
                f"{r['first_batch_task_wall_ms']:.0f} / {r['first_batch_task_cpu_ms']:.0f}",
                f"{r['first_batch_consumers_created']:g}" if r["source"] == STREAMCTL else "one per partition",
                f"{by[BUILTIN]['first_batch_ms'] / by[STREAMCTL]['first_batch_ms']:.1f}x"
                if r["source"] == STREAMCTL
                else "",
            )
        )
    return rows


def raise_file_limit() -> str:
    """Raises this process's open-file limit (inherited by the broker and Spark it starts) as far as it may go:
    4,096 partitions take about 12,000 file handles in the Spark JVM (two sockets and a selector's two per
    consumer, on both sides) and as many in the broker. Returns the limit in force."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for want in (1 << 17, hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), max(hard, want)))
            break
        except (ValueError, OSError):
            continue
    return str(resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def run(
    spark: SparkSession, servers: str, sizes: tuple[int, ...], per_partition: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Runs every size with both sources at both settings; returns one result per (size, source, settings)."""
    j = jvm(spark)
    results: list[dict[str, Any]] = []
    side_by_side: dict[str, Any] = {}
    side_by_side_size = max((s for s in sizes if s <= SIDE_BY_SIDE_UP_TO), default=None)
    framed: list[dict[str, Any]] = []
    floor: list[dict[str, Any]] = []
    floor_one: list[dict[str, Any]] = []
    few_forks: list[dict[str, Any]] = []
    started = time.monotonic()
    elapsed: dict[str, float] = {}
    warm_up = min(WARM_UP_PARTITIONS, max(sizes))
    # A measured size's topic serves as the warm-up's when it has the warm-up's partitions: the
    # warm-up reads it in five batches (all its records, per_partition / 5 a partition each), a
    # 1,024-partition topic fewer to write and delete.
    shared = warm_up in sizes
    with _watching(spark) as (times, listener), tempfile.TemporaryDirectory(prefix="streamctl-scale-") as tmp:
        topic = f"bench-scale-{warm_up}" if shared else "bench-scale-warm-up"
        records = per_partition if shared else WARM_UP_RECORDS
        per_batch = max(1, records // WARM_UP_BATCHES)
        kafka.create_stream(spark, servers, topic, warm_up)
        kafka.produce_synthetic(spark, servers, topic, warm_up * records, 100)
        print(f"  warm-up topic ready in {time.monotonic() - started:.0f} s", flush=True)
        for source in (STREAMCTL, BUILTIN):
            checkpoint = Path(tmp) / f"warm-up-{source}"
            _one_run(spark, servers, topic, warm_up, records, source, "tuned", checkpoint, listener, times, per_batch)
        if not shared:
            kafka.delete_stream(spark, servers, topic)  # streamctl's pool: emptied before the built-in's run
        elapsed["warm-up"] = round(time.monotonic() - started, 1)
        print(f"  warm-up, {warm_up:,} partitions, both sources: {elapsed['warm-up']:,.0f} s", flush=True)
        for index, size in enumerate(sizes):
            size_started = time.monotonic()
            topic = f"bench-scale-{size}"
            if not (shared and size == warm_up):
                kafka.create_stream(spark, servers, topic, size)
                kafka.produce_synthetic(spark, servers, topic, size * per_partition, 100)
            print(
                f"  {size} partitions: {size * per_partition:,} records "
                f"(topic ready in {time.monotonic() - size_started:.0f} s)",
                flush=True,
            )
            # Alternating order, so neither source always runs on a warmer JVM or broker (by the
            # size's place: every size is even, so the size's parity never alternated).
            order = [
                (s, st)
                for st in SCALE_SETTINGS
                for s in (STREAMCTL, BUILTIN, SINGLE_TASK)
                if (st == "tuned" or size < TUNED_ONLY_FROM)
                and (s != SINGLE_TASK or (st == "tuned" and size <= ONE_INPUT_PARTITION_UP_TO))
            ]
            sequence = order if index % 2 == 0 else list(reversed(order))
            if size <= BOTH_ORDERS_UP_TO:  # and back again: each source runs once before the other
                sequence = sequence + list(reversed(sequence))
            # The floor halfway through the sources' runs and, where each source runs twice, last as
            # well: never first, whose run pays for the broker settling after the topic's records
            # were written (and the last size's topic deleted): 326-430 ms against 229-370 at 8 and
            # 128 partitions when it ran first.
            floor_runs: dict[int, list[list[dict[str, Any]]]] = {}
            runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
            for i, (source, settings) in enumerate(sequence):
                if i == len(sequence) // 2 and size <= FLOOR_UP_TO:
                    _floors(spark, size, Path(tmp), floor_runs)
                run_started = time.monotonic()
                one = _one_run(
                    spark,
                    servers,
                    topic,
                    size,
                    per_partition,
                    source,
                    settings,
                    Path(tmp) / f"{size}-{_slug(source)}-{settings}-{i}",
                    listener,
                    times,
                )
                runs.setdefault((source, settings), []).append(one)
                print(
                    f"    {source}, {settings}: batch {_median([b['ms'] for b in one['steady']]):.0f} ms, "
                    f"first batch {one['first_batch_ms']:,} ms ({time.monotonic() - run_started:.0f} s)",
                    flush=True,
                )
            for (source, settings), done in runs.items():
                r = _summary(done)
                r.update(partitions=size, source=source, settings=settings)
                print(
                    f"    {source}, {settings}, {len(done)} run(s): batch {r['batch_ms']:.0f} ms "
                    f"(addBatch {r['phases_ms']['addBatch']:.0f}, "
                    f"latestOffset {r['phases_ms']['latestOffset']:.0f}), "
                    f"first batch {r['first_batch_ms']:,} ms, task wall/CPU {r['task_wall_ms']:.0f}/"
                    f"{r['task_cpu_ms']:.0f} ms, {r['bytes_per_batch']:,.0f} B/batch, consumers created/reused "
                    f"per batch {r['consumers_created_per_batch']:g}/{r['consumers_reused_per_batch']:g}, "
                    f"open files after each run {r['open_files_per_run']}",
                    flush=True,
                )
                results.append(r)
            if size <= min(BOTH_ORDERS_UP_TO, FLOOR_UP_TO):
                _floors(spark, size, Path(tmp), floor_runs)
            if size in floor_runs:
                floor.append(_floor_summary(size, floor_runs[size]))
            if 1 in floor_runs:
                floor_one.append(_floor_summary(size, floor_runs[1]))
            if size <= FEW_FORKS_UP_TO:
                few_forks.append(
                    _with_few_forks(spark, servers, topic, size, per_partition, Path(tmp), listener, times)
                )
            if size <= FRAMED_UP_TO:
                framed.append(_framed(spark, servers, size, per_partition, Path(tmp) / f"{size}-framed", listener))
            if size == side_by_side_size:
                side_by_side = _two_queries(spark, servers, topic, size, Path(tmp) / "two", listener)
            if index < len(sizes) - 1:  # after the last, the session and the broker stop
                kafka.delete_stream(spark, servers, topic)
                # The deleted topic's consumers would idle out of the pool in 5 minutes; the next size's
                # thousands of consumers (four file handles each) should not wait for that.
                j.streamctl.system.ConsumerPool.clear()
            elapsed[str(size)] = round(time.monotonic() - size_started, 1)
            print(f"  {size} partitions took {elapsed[str(size)]:,.0f} s", flush=True)
    config = {
        "sizes": list(sizes),
        "records_per_partition": per_partition,
        "value_bytes": 100,
        "settings": SCALE_SETTINGS,
        "tuned_only_from_partitions": TUNED_ONLY_FROM,
        "two_queries_side_by_side": {"partitions": side_by_side_size, **side_by_side},
        "framed_with_watermarks": framed,
        "floor": floor,
        "floor_one_input_partition": floor_one,
        "one_input_partition_up_to_partitions": ONE_INPUT_PARTITION_UP_TO,
        "few_forks": few_forks,
        "few_forks_settings": FEW_FORKS,
        "few_forks_up_to_partitions": FEW_FORKS_UP_TO,
        "maxOffsetsPerTrigger": "2 x partitions",
        "trigger": "AvailableNow",
        "sink": "noop",
        "master": spark.sparkContext.master,
        "steady_state": "medians of batches 1-9",
        "broker_properties": BROKER_PROPERTIES,
        "framed_up_to_partitions": FRAMED_UP_TO,
        "floor_up_to_partitions": FLOOR_UP_TO,
        "warm_up": f"{warm_up} partitions, {WARM_UP_BATCHES} batches, both sources, before the first size"
        + (f" (the {warm_up}-partition size's topic)" if shared else f" ({WARM_UP_RECORDS} records a partition)"),
        "order": "alternating by size: streamctl first at the 1st and 3rd sizes, the built-in at the 2nd and 4th; "
        f"up to {BOTH_ORDERS_UP_TO} partitions each source twice (A B B A), medians over both runs' batches",
        "elapsed_s": {**elapsed, "all": round(time.monotonic() - started, 1)},
    }
    return results, config


HEADER = (
    "partitions",
    "settings",
    "streamctl batch ms",
    "built-in batch ms",
    "ratio (streamctl / built-in)",
    "streamctl latestOffset+queryPlanning ms",
    "built-in",
    "first batch ms streamctl / built-in",
    "task wall/CPU ms streamctl",
    "built-in",
    "bytes/batch streamctl",
    "built-in",
    "bytes ratio",
    "files written/batch streamctl / built-in",
    "consumers created/reused per batch (streamctl)",
)
PHASE_HEADER = ("partitions", "settings", "source", *PHASES, "triggerExecution", "JVM open files after each run")


def rows(results: list[dict[str, Any]]) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The comparison table (one row per size and settings) and the per-phase breakdown."""
    by = {(r["partitions"], r["source"], r["settings"]): r for r in results}
    table, phases = [], []
    for size in sorted({r["partitions"] for r in results}):
        for settings in SCALE_SETTINGS:
            s, b = by.get((size, STREAMCTL, settings)), by.get((size, BUILTIN, settings))
            if s is None or b is None:
                continue
            plan = lambda r: r["phases_ms"]["latestOffset"] + r["phases_ms"]["queryPlanning"]  # noqa: E731
            table.append(
                (
                    f"{size:,}",
                    settings,
                    f"{s['batch_ms']:,.0f}",
                    f"{b['batch_ms']:,.0f}",
                    f"{s['batch_ms'] / b['batch_ms']:.2f}x",
                    f"{plan(s):,.0f}",
                    f"{plan(b):,.0f}",
                    f"{s['first_batch_ms']:,} / {b['first_batch_ms']:,}",
                    f"{s['task_wall_ms']:.0f} / {s['task_cpu_ms']:.0f}",
                    f"{b['task_wall_ms']:.0f} / {b['task_cpu_ms']:.0f}",
                    f"{s['bytes_per_batch']:,.0f}",
                    f"{b['bytes_per_batch']:,.0f}",
                    f"{s['bytes_per_batch'] / max(1, b['bytes_per_batch']):.2f}x",
                    f"{s['files_per_batch']:g} / {b['files_per_batch']:g}",
                    f"{s['consumers_created_per_batch']:g} / {s['consumers_reused_per_batch']:g}",
                )
            )
            for r in (s, b):
                phases.append(
                    (
                        f"{size:,}",
                        settings,
                        r["source"],
                        *(f"{r['phases_ms'][ph]:,.0f}" for ph in PHASES),
                        f"{r['batch_ms']:,.0f}",
                        " / ".join(f"{n:,}" for n in r["open_files_per_run"]),
                    )
                )
    return table, phases


FLOOR_HEADER = (
    "partitions",
    "floor batch ms (rate-micro-batch)",
    "built-in batch ms (tuned)",
    "floor / built-in",
    "streamctl / built-in (tuned)",
    "floor walCommit + commitOffsets ms",
    "floor addBatch ms",
)


def floor_rows(results: list[dict[str, Any]], config: dict[str, Any]) -> list[tuple[str, ...]]:
    """Per size, Spark's floor (a source that reads nothing) beside both sources' tuned batches: the
    best ratio to the built-in any source with one input partition per partition could reach."""
    by = {(r["partitions"], r["source"]): r for r in results if r["settings"] == "tuned"}
    out = []
    for f in config["floor"]:
        s, b = by.get((f["partitions"], STREAMCTL)), by.get((f["partitions"], BUILTIN))
        if s is None or b is None:
            continue
        ph = f["phases_ms"]
        out.append(
            (
                f"{f['partitions']:,}",
                f"{f['batch_ms']:,.0f}",
                f"{b['batch_ms']:,.0f}",
                f"{f['batch_ms'] / b['batch_ms']:.2f}x",
                f"{s['batch_ms'] / b['batch_ms']:.2f}x",
                f"{ph['walCommit'] + ph['commitOffsets']:,.0f}",
                f"{ph['addBatch']:,.0f}",
            )
        )
    return out


FEW_FORKS_HEADER = (
    "partitions",
    "streamctl batch ms",
    "built-in batch ms",
    "floor batch ms",
    "streamctl / built-in",
    "floor / built-in",
    "walCommit + commitOffsets ms streamctl / built-in / floor",
    "addBatch ms streamctl / built-in / floor",
)


def few_forks_rows(config: dict[str, Any]) -> list[tuple[str, ...]]:
    """Per size, both sources (tuned) and the floor with FEW_FORKS: the ratios once the machine's forks
    are out of Spark's log writes."""
    out = []
    for r in config["few_forks"]:
        s, b, f = r[STREAMCTL], r[BUILTIN], r["floor"]
        logs = lambda x: x["phases_ms"]["walCommit"] + x["phases_ms"]["commitOffsets"]  # noqa: E731
        out.append(
            (
                f"{r['partitions']:,}",
                f"{s['batch_ms']:,.0f}",
                f"{b['batch_ms']:,.0f}",
                f"{f['batch_ms']:,.0f}",
                f"{s['batch_ms'] / b['batch_ms']:.2f}x",
                f"{f['batch_ms'] / b['batch_ms']:.2f}x",
                " / ".join(f"{logs(x):,.0f}" for x in (s, b, f)),
                " / ".join(f"{x['phases_ms']['addBatch']:,.0f}" for x in (s, b, f)),
            )
        )
    return out


ONE_INPUT_PARTITION_HEADER = (
    "partitions",
    "Spark's log writes",
    "built-in batch ms",
    "streamctl batch ms (/ built-in)",
    "streamctl, grouper=single batch ms (/ built-in)",
    "floor, P input partitions ms (/ built-in)",
    "floor, one input partition ms (/ built-in)",
    "addBatch ms built-in / streamctl / grouper=single / floor P / floor one",
)


def one_input_partition_rows(results: list[dict[str, Any]], config: dict[str, Any]) -> list[tuple[str, ...]]:
    """Up to ONE_INPUT_PARTITION_UP_TO partitions, what one Spark input partition instead of P is
    worth (all tuned): both sources, streamctl as SINGLE_TASK and the floor with P and with one input
    partition, as Spark writes its logs and with FEW_FORKS."""
    by = {(r["partitions"], r["source"]): r for r in results if r["settings"] == "tuned"}
    floors = {f["partitions"]: f for f in config["floor"]}
    as_they_are = [
        (
            "as they are",
            {
                "partitions": f["partitions"],
                **{s: by[(f["partitions"], s)] for s in (STREAMCTL, BUILTIN, SINGLE_TASK)},
                "floor": floors[f["partitions"]],
                "floor_one_input_partition": f,
            },
        )
        for f in config["floor_one_input_partition"]
    ]
    few = [("few forks", r) for r in config["few_forks"] if "floor_one_input_partition" in r]
    out = []
    for logs, r in as_they_are + few:
        b = r[BUILTIN]
        measured = [r[k] for k in (STREAMCTL, SINGLE_TASK, "floor", "floor_one_input_partition")]
        out.append(
            (
                f"{r['partitions']:,}",
                logs,
                f"{b['batch_ms']:,.0f}",
                *(f"{m['batch_ms']:,.0f} ({m['batch_ms'] / b['batch_ms']:.2f}x)" for m in measured),
                " / ".join(f"{m['phases_ms']['addBatch']:,.0f}" for m in [b, *measured]),
            )
        )
    return out


FRAMED_HEADER = ("partitions", "batch ms", "bytes written per batch", "files written per batch")


def framed_rows(config: dict[str, Any]) -> list[tuple[str, ...]]:
    """The intermediate-stream table: what a batch writes when every partition carries a watermark."""
    return [
        (f"{r['partitions']:,}", f"{r['batch_ms']:,.0f}", f"{r['bytes_per_batch']:,.0f}", f"{r['files_per_batch']:g}")
        for r in config["framed_with_watermarks"]
    ]
