"""Fixtures: one real Kafka broker and one real local SparkSession for the whole run."""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pyspark
import pytest
from py4j.protocol import Py4JJavaError
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

import streamctl_testing
from streamctl import LISTENER_CLASS, options
from streamctl._ops import cache_dir, keep_class_archive, pending_class_archive
from streamctl_testing import kafka, kafka_broker
from streamctl_testing._jvm import jvm
from streamctl_testing.broker import KafkaBroker

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

# Every driver of a run also maps one class-data archive (AppCDS) of Spark's own classes, made once
# per pyspark and java on the machine: loading and verifying those classes was half of a child
# driver's start (18 against 9 CPU-seconds for a session that runs two small jobs). JVM logging is
# off in them, so an archive that does not fit (another classpath) is skipped without a word on
# the stdout that some jobs answer on.
_DUMP_JOB = """
from pyspark.sql import SparkSession
import streamctl_testing
spark = streamctl_testing.configure_spark(SparkSession.builder.master("local[2]")
    .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")).getOrCreate()
spark.range(1000).selectExpr("id % 7 AS k").groupBy("k").count().collect()
q = (spark.readStream.format("rate").load().writeStream.format("memory").queryName("warm")
     .trigger(availableNow=True).start())
q.awaitTermination(120)
spark.stop()
"""


def _class_archive_opts() -> str:
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    jars = Path(pyspark.__file__).parent / "jars"
    stamp = [subprocess.run([java, "-version"], capture_output=True, text=True).stderr, str(jars)]
    stamp += sorted(f"{p.name}:{p.stat().st_mtime_ns}" for p in jars.iterdir())
    stamp.append(_CHILD_DRIVER_OPTS)  # the flags it is made with (the GC among them)
    key = hashlib.sha256("\0".join(stamp).encode()).hexdigest()[:16]
    cache = cache_dir() / "test-class-archives"
    archive = cache / f"spark-{pyspark.__version__}-{key}.jsa"
    if not archive.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        with (cache / f"{archive.name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the other pytest processes wait for the first one's
            if not archive.is_file():
                pending = pending_class_archive(archive)
                opts = f"{_CHILD_DRIVER_OPTS} -Xlog:disable -XX:ArchiveClassesAtExit={pending}"
                env = {**os.environ, "SPARK_SUBMIT_OPTS": opts}
                subprocess.run([sys.executable, "-c", _DUMP_JOB], env=env, capture_output=True, timeout=600)
                if pending.is_file():
                    made_from = [os.path.realpath(shutil.which(java) or java), *(str(p) for p in jars.iterdir())]
                    keep_class_archive(pending, archive, made_from)
    return f" -Xlog:disable -XX:SharedArchiveFile={archive}" if archive.is_file() else ""


# Every driver of a run (the session's, child drivers, Connect servers) gets these:
# - Serial GC: a 1 GB heap needs no concurrent collector, whose threads compete for CI's two cores
#   (three test files: the session driver 91 against 102 CPU-seconds, the files 160 s against 170 s).
# - `spark.sql.streaming.pollingDelay` 100 ms instead of Spark's 10 ms (SparkConf takes `spark.*`
#   system properties): how long a query waits before asking its sources again when a batch found
#   no new data. A query left running while a test waits for something else otherwise plans ~100
#   times a second: 0.55 of a core for one idle streamctl query (driver and broker; 0.74 for Spark's
#   own source). Behaviour does not depend on either; a batch starts up to 100 ms later.
# - A code cache of 512 MB instead of 240 MB (reserved address space; only what is compiled takes
#   memory): the session's driver runs a whole suite's queries, each with classes Spark generates,
#   and once ran out in a loaded full run ("VirtualMachineError: Out of space in
#   CodeCache for adapters" in a task, which Spark's handler answers by ending the JVM, failing
#   every later test of that worker).
_TEST_JVM_OPTS = " -XX:+UseSerialGC -XX:ReservedCodeCacheSize=512m -Dspark.sql.streaming.pollingDelay=100ms"

# The test brokers (the session's and those tests start) use the quick JIT only: 14 against 28
# CPU-seconds for a broker serving three test files, and the files took 157 s instead of 177 s.
KafkaBroker.extra_jvm_flags = ("-XX:TieredStopAtLevel=1",)

# Many tests start Spark drivers of their own (a job to kill and restart, a CLI, a README
# example; the chaos test alone starts 21), each living seconds. On CI's two cores, C2 compiling
# Spark cost each of them ~40% of its CPU (31 vs 19 CPU-seconds to a job's third batch) for code
# it never runs long, and slowed every test running beside it. Those drivers get C1 only. The
# session's own driver (the `spark` fixture) keeps the JVM's default in the full suite, where it
# works for the whole run (C1 only there: 131 against 119 CPU-seconds for eight test files), and
# gets C1 in a smoke run (-m smoke, the other Spark lines' set: 54 against 108 CPU-seconds on
# pyspark 4.2.1, where it mostly waits for child drivers). Behaviour does not depend on the JIT.
_CHILD_DRIVER_OPTS = "-XX:TieredStopAtLevel=1" + _TEST_JVM_OPTS
_SET_CHILD_DRIVER_OPTS = "SPARK_SUBMIT_OPTS" not in os.environ
_ARCHIVE_OPTS = _class_archive_opts() if _SET_CHILD_DRIVER_OPTS else ""
_CHILD_DRIVER_OPTS += _ARCHIVE_OPTS
if _SET_CHILD_DRIVER_OPTS:
    os.environ["SPARK_SUBMIT_OPTS"] = _CHILD_DRIVER_OPTS

# Event times start an hour ago: far older records would fall to the broker's 7-day retention.
T0 = (int(time.time()) // 60 - 60) * 60_000

_names = itertools.count()


@pytest.fixture(scope="session")
def broker() -> Iterator[object]:
    # Tests write records with fixed timestamps from 2023: the default 7-day time retention
    # would delete them at the broker's 5-minute retention check, midway through the run. A worker's
    # every test needs this broker, which starts beside other pytest processes' drivers and brokers
    # on CI's two cores: it gets three minutes, not one (a healthy start takes seconds).
    with kafka_broker(properties={"log.retention.ms": "-1"}, start_timeout=180) as b:
        yield b


@pytest.fixture(scope="session")
def servers(broker: object) -> str:
    return broker.bootstrap_servers  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def spark(request: pytest.FixtureRequest) -> Iterator[SparkSession]:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("streamctl-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.streaming.noDataMicroBatches.enabled", "false")
        .config("spark.driver.memory", "1g")
    )
    session_keeps_c2 = _SET_CHILD_DRIVER_OPTS and request.config.getoption("markexpr") != "smoke"
    if session_keeps_c2:
        # The session's own driver: see _CHILD_DRIVER_OPTS.
        os.environ["SPARK_SUBMIT_OPTS"] = _ARCHIVE_OPTS + _TEST_JVM_OPTS
    try:
        session = streamctl_testing.configure_spark(builder).getOrCreate()
    finally:
        if session_keeps_c2:
            os.environ["SPARK_SUBMIT_OPTS"] = _CHILD_DRIVER_OPTS
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


@pytest.fixture
def make_stream(spark: SparkSession, servers: str, request: pytest.FixtureRequest) -> Callable[..., str]:
    """Creates a fresh topic named after the test; returns its name."""

    def make(partitions: int = 1, suffix: str = "") -> str:
        base = re.sub(r"[^a-zA-Z0-9]", "-", request.node.name)[-80:]
        name = f"{base}-{suffix or 's'}-{next(_names)}"
        kafka.create_stream(spark, servers, name, partitions)
        return name

    return make


@contextmanager
def session_conf(spark: SparkSession, confs: dict[str, str]) -> Iterator[None]:
    """Sets ``confs`` on the shared session while the block runs, then puts back what was there
    (or unsets), so that no test's setting reaches the next test of the process."""
    before = {k: spark.conf.get(k, None) for k in confs}
    for k, v in confs.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


@contextmanager
def driver_log(spark: SparkSession, level: str = "WARN") -> Iterator[Callable[[], str]]:
    """Captures what the driver JVM logs at ``level`` or above (executors too, in local mode)
    while the block runs; yields a function that returns the text so far.

    Attached to log4j's root logger through py4j, as an appender Spark's own setup would add.
    """
    j = jvm(spark)
    core = j.org.apache.logging.log4j.core
    writer = j.java.io.StringWriter()
    name = f"streamctl-test-{next(_names)}"
    layout = core.layout.PatternLayout.newBuilder().withPattern("%p %c{1} %m%n").build()
    appender = core.appender.WriterAppender.createAppender(layout, None, writer, name, False, True)
    appender.start()
    config = j.org.apache.logging.log4j.LogManager.getContext(False).getConfiguration()
    config.addAppender(appender)
    config.getRootLogger().addAppender(appender, j.org.apache.logging.log4j.Level.getLevel(level), None)
    j.org.apache.logging.log4j.LogManager.getContext(False).updateLoggers()
    try:
        yield lambda: str(writer.toString())
    finally:
        config.getRootLogger().removeAppender(name)
        j.org.apache.logging.log4j.LogManager.getContext(False).updateLoggers()
        appender.stop()


def streamctl_listeners(spark: SparkSession) -> int:
    """How many streamctl query listeners the session has (py4j: pyspark cannot list JVM listeners)."""
    listeners = spark._jsparkSession.streams().listListeners()  # noqa: SLF001
    return sum(1 for listener in listeners if listener.getClass().getName() == LISTENER_CLASS)


def recreate_stream(spark: SparkSession, servers: str, stream: str, partitions: int) -> None:
    """Deletes a topic and creates it again under the same name (Kafka gives it a new topic ID)."""
    kafka.delete_stream(spark, servers, stream)
    deadline = time.monotonic() + 60
    while True:  # deletion finishes in the background; re-creating fails until it has
        try:
            kafka.create_stream(spark, servers, stream, partitions)
            return
        except Py4JJavaError:
            assert time.monotonic() < deadline, f"could not re-create {stream} within 60 s"
            time.sleep(0.5)


def read_committed_values(spark, servers: str, stream: str, partitions: int) -> list[str]:
    """Every value of ``stream`` as a plain Kafka consumer with ``isolation.level=read_committed`` reads it."""
    return sorted(v.decode() for p in range(partitions) for v in kafka.read_committed(spark, servers, stream, p))


def read_committed_numbers(spark, servers: str, stream: str, partitions: int) -> list[int]:
    """The user records of intermediate ``stream`` (framed: type byte 0; control messages are 1 and 2)
    whose values are numbers, as a plain ``read_committed`` Kafka consumer reads them, sorted."""
    framed = [v for p in range(partitions) for v in kafka.read_committed(spark, servers, stream, p)]
    return sorted(int(v[1:]) for v in framed if v[0] == 0)


def run_available_now(df: DataFrame, checkpoint: str) -> list[Row]:
    """Runs a query with Trigger.AvailableNow and returns the rows of every batch it ran.

    foreachBatch rather than the memory sink: it can resume from a checkpoint.
    """
    rows: list[Row] = []
    q = (
        df.writeStream.foreachBatch(lambda batch, _id: rows.extend(batch.collect()))
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    try:
        finished = q.awaitTermination(180)
        if q.exception() is not None:
            raise q.exception()  # type: ignore[misc]
        assert finished, "the AvailableNow query did not finish in 180 s"
    finally:
        q.stop()
    return rows


def committed_batches(checkpoint: Path) -> int:
    """How many batches the query with this checkpoint has committed."""
    commits = checkpoint / "commits"
    return len([p for p in commits.iterdir() if p.name.isdigit()]) if commits.is_dir() else 0


def planned_batches(checkpoint: Path) -> int:
    """How many batches the query with this checkpoint has planned (logged their offsets); one more
    than committed while a batch runs."""
    offsets = checkpoint / "offsets"
    return len([p for p in offsets.iterdir() if p.name.isdigit()]) if offsets.is_dir() else 0


def run_job_until(
    script: str,
    args: Sequence[str],
    ready: Callable[[], bool],
    *,
    timeout: float,
    died: str,
    stuck: str,
    log: Path | None = None,
) -> None:
    """Runs ``tests/<script>`` in a process group of its own until ``ready()``, then SIGKILLs the
    group (the Python driver and its Spark JVM), so the query dies mid-batch as in a crash.

    Fails with ``died`` if the job ends by itself first (with the tail of ``log``, where its
    stderr goes when given) and with ``stuck`` after ``timeout`` seconds.
    """
    stderr = log.open("w") if log is not None else None
    job = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name(script)), *args],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=stderr if stderr is not None else subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert job.poll() is None, died if log is None else f"{died}:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, stuck
            time.sleep(0.2)
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
        if stderr is not None:
            stderr.close()


def read_intermediate(
    spark: SparkSession, servers: str, stream: str, more: dict[str, str] | None = None, **source_opts: object
) -> DataFrame:
    """The streamctl source on intermediate ``stream``, from its beginning; ``more``: further options."""
    return (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [stream], starting_offsets="earliest", **source_opts))  # type: ignore[arg-type]
        .options(**options.intermediate(stream))
        .options(**(more or {}))
        .load()
    )


def forwarding_query(
    spark: SparkSession,
    servers: str,
    src: str,
    mid: str,
    checkpoint: Path,
    *,
    event_time_in_value: bool = False,
    **sink_opts: object,
) -> DataStreamWriter:
    """``src`` (5 records a batch, watermark on the Kafka timestamp) written to ``mid`` by the streamctl sink.
    With ``event_time_in_value`` the value becomes ``"<event time ms>,<value>"`` (the sink's records carry
    the broker's time, so a downstream query reads the event time from there)."""
    df = (
        spark.readStream.format("streamctl")
        .options(**options.source(servers, [src], starting_offsets="earliest", max_records_per_batch=5))
        .load()
        .withWatermark("timestamp", "0 seconds")
    )
    value = (
        F.concat_ws(",", F.unix_millis("timestamp").cast("string"), F.col("value").cast("string")).alias("value")
        if event_time_in_value
        else F.col("value")
    )
    return (
        df.select("key", value)
        .writeStream.format("streamctl")
        .options(**options.sink(servers, mid, intermediate=True, **sink_opts))  # type: ignore[arg-type]
        .option("checkpointLocation", str(checkpoint))
    )


def raw_records(spark: SparkSession, servers: str, stream: str, partition: int) -> list[tuple[int, dict | bytes]]:
    """(type byte, decoded control payload or user bytes) of every record of an intermediate partition."""
    return [(v[0], json.loads(v[1:]) if v[0] else v[1:]) for v in kafka.read_raw(spark, servers, stream, partition)]


_KINDS = {2: "eos", 3: "idle", 4: "active"}


def record_shape(records: list[tuple[int, dict | bytes]]) -> list[int | str]:
    """A partition as read: user records as ints, watermarks as ms after T0, other control messages by kind."""
    return [c["timestamp"] - T0 if t == 1 else _KINDS[t] if t else int(c) for t, c in records]  # type: ignore[index, arg-type]


def wait_for(what: str, condition: Callable[[], object], *queries: StreamingQuery, timeout: float = 120) -> None:
    """Returns once ``condition()`` holds. Fails with ``what`` after ``timeout`` seconds, and at once
    with the error of any of ``queries`` that has failed: a dead query would never get there."""
    deadline = time.monotonic() + timeout
    while not condition():
        for q in queries:
            if q.exception() is not None:
                raise q.exception()  # type: ignore[misc]
        assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f} s"
        time.sleep(0.2)


def idle_triggers(query: StreamingQuery, count: int = 3) -> None:
    """Returns once ``query`` ran ``count`` triggers that found no new data (or stopped): each asked its
    sources for new offsets and ran whatever batch they offered, so a test can then assert that nothing
    more happened. Spark's processAllAvailable returns after one such trigger, which may have begun
    before the call: hence several."""
    for _ in range(count):
        query.processAllAvailable()


def control_metrics(progress: dict) -> dict:
    """The in-band control metrics of a progress report's first source."""
    metrics = progress["sources"][0]["metrics"]
    return {
        "watermark": int(metrics["watermark"]) if "watermark" in metrics else None,
        "endOfStream": metrics.get("endOfStream"),
        "control": json.loads(metrics.get("control", "{}")),
    }


# The slowest files first (measured: each takes minutes, most of them killing and restarting drivers).
# build.sh runs the suite in two processes handing out one file at a time (--dist loadfile): a slow
# file handed out last runs alone at the end while the other process has nothing left to do.
_SLOW_FILES_FIRST = (
    "test_chaos.py",
    "test_transactions.py",
    "test_real_time.py",
    "test_control.py",
    "test_host_affinity.py",
    "test_transaction_attempts.py",
    "test_broker.py",
    "test_security.py",
    "test_doc_examples.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(_SLOW_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order
