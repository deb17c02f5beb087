"""Fixtures: one real Kafka broker and one real local SparkSession for the whole run."""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, Row, SparkSession

import streamctl
from streamctl import kafka
from streamctl.testing import kafka_broker

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

_names = itertools.count()


@pytest.fixture(scope="session")
def broker() -> Iterator[object]:
    # Tests write records with fixed timestamps from 2023: the default 7-day time retention
    # would delete them at the broker's 5-minute retention check, midway through the run.
    with kafka_broker(properties={"log.retention.ms": "-1"}) as b:
        yield b


@pytest.fixture(scope="session")
def servers(broker: object) -> str:
    return broker.bootstrap_servers  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("streamctl-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.streaming.noDataMicroBatches.enabled", "false")
        .config("spark.driver.memory", "1g")
    )
    session = streamctl.configure_spark(builder).getOrCreate()
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
    q.awaitTermination(180)
    if q.exception() is not None:
        raise q.exception()  # type: ignore[misc]
    return rows


def committed_batches(checkpoint: Path) -> int:
    """How many batches the query with this checkpoint has committed."""
    commits = checkpoint / "commits"
    return len([p for p in commits.iterdir() if p.name.isdigit()]) if commits.is_dir() else 0


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
